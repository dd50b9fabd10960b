import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { moveDepotCa, type CaMoveOptions } from '../../src/procedures/index.js';
import { DepotkitError, EXIT } from '../../src/util/errors.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** The plan alone: no server and no consumer is reached before the new pair is judged. */
describe('the CA move plan', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let opts: CaMoveOptions;
  beforeAll(async () => {
    tmp = await tempDir('depotkit-ca-move-plan-');
    const ca = await createCa({ cn: 'New Depot CA', keySize: 2048 });
    const names = { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 as const };
    const [leaf, other] = await Promise.all([issueServerCert(ca, names), issueServerCert(ca, names)]);
    const f = (name: string) => join(tmp.dir, name);
    await Promise.all([
      writeFile(f('chain.pem'), leaf.chainPem),
      // The key of another certificate: a server given this pair could not serve it.
      writeFile(f('key.pem'), other.keyPem, { mode: 0o600 }),
      writeFile(f('ca.pem'), ca.certPem),
      // The new CA again, under another name: what a mix-up of the two CA files gives.
      writeFile(f('ca-copy.pem'), ca.certPem),
    ]);
    opts = {
      newCert: f('chain.pem'),
      newKey: f('key.pem'),
      newCa: f('ca.pem'),
      // Nothing listens on these: the plan must stop the move before any of them is tried.
      served: { kind: 'site', certFile: f('served-cert.pem'), keyFile: f('served-key.pem') },
      depot: { url: 'https://127.0.0.1:9', username: 'depot', password: 'unused' },
      consumers: [{ name: 'consumer-0', url: 'https://127.0.0.1:9', user: 'admin@local', passwordEnv: 'DEPOTKIT_TEST_UNSET' }],
      concurrency: 1,
      timeoutMs: 1000,
    };
  });
  afterAll(() => tmp?.cleanup());

  it("a key that is not the certificate's: the dry run names it, and the move refuses before anything is changed", async () => {
    const dry = await moveDepotCa({ ...opts, dryRun: true });
    expect(dry.ok).toBe(false);
    expect(dry.plan.findings).toContainEqual(expect.objectContaining({ id: 'cert.key.mismatch', severity: 'error' }));
    await expect(moveDepotCa(opts)).rejects.toThrow(/would fail validation: .*is not the key of/);
  });

  it('an old CA that is the new one (by SHA-256, whatever its file) is refused by the plan, dry run included, before anything is reached', async () => {
    for (const dryRun of [true, false]) {
      const refused = await moveDepotCa({ ...opts, oldCa: join(tmp.dir, 'ca-copy.pem'), removeOld: true, dryRun }).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(DepotkitError);
      expect((refused as DepotkitError).exitCode).toBe(EXIT.usage);
      expect((refused as DepotkitError).message).toMatch(/^The old CA \S+ca-copy\.pem is the new CA \S+ca\.pem \(SHA-256 ([0-9A-F]{2}:){31}[0-9A-F]{2}\)/);
      expect((refused as DepotkitError).fix).toMatch(/`oldCa`/);
    }
  });

  it('through the command line: the old CA that is the new one is exit 2, named by its flag, dry run included', async () => {
    const inventory = join(tmp.dir, 'consumers.yaml');
    await writeFile(inventory, 'installers:\n  - { name: consumer-0, url: "https://127.0.0.1:9", passwordEnv: DEPOTKIT_TEST_UNSET, insecure: true }\n');
    const f = (name: string) => join(tmp.dir, name);
    const refused = await runCli(
      [
        ...['depot', 'move-ca', '--cert', f('chain.pem'), '--key', f('key.pem'), '--new-ca', f('ca.pem'), '--old-ca', f('ca-copy.pem'), '--remove-old'],
        ...['--served-cert', f('served-cert.pem'), '--served-key', f('served-key.pem'), '--site', 'nginx'],
        ...['--depot-url', 'https://127.0.0.1:9', '--inventory', inventory, '--dry-run'],
      ],
      { env: { DEPOTKIT_TEST_UNSET: 'unused' } },
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/The old CA \S+ca-copy\.pem is the new CA \S+ca\.pem/);
    expect(refused.stderr).toContain('--old-ca');
    expect(refused.stderr).not.toMatch(/\bat .*\.js:\d+/);
  }, 60_000);
});
