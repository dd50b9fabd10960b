/**
 * The CA move's verdict on the new certificate is `check`'s: the same finding ids `check` gives for a
 * depot serving that certificate, judged against the new CA and the names the consumers use. Real TLS:
 * the new pair served on 127.0.0.1, `check` run against it.
 */
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { checkDepot } from '../../src/check/index.js';
import { moveDepotCa, type CaMoveOptions } from '../../src/procedures/index.js';
import { DepotkitError } from '../../src/util/errors.js';
import { closedPort } from '../helpers/ports.js';
import { tempDir } from '../helpers/temp.js';

/** The ids of check's findings on the served certificate (its TLS stage), each once, sorted. */
function certificateIds(findings: Array<{ id: string }>): string[] {
  return [...new Set(findings.map((f) => f.id).filter((id) => id.startsWith('tls.') || id.startsWith('cert.')))].sort();
}

describe("the CA move judges the new certificate by check's verdict", () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let server: Server;
  let depotUrl: string;
  let opts: CaMoveOptions;
  const f = (name: string) => join(tmp.dir, name);
  /** check's ids for the depot serving the new certificate, given `ca` and, with `asHost`, that name. */
  const checkIds = async (ca: string, asHost?: string) =>
    certificateIds((await checkDepot(depotUrl, { caPems: [ca], timeoutMs: 10_000, ...(asHost ? { asHost } : {}) })).findings);

  let issuer: string;
  let unrelated: string;
  beforeAll(async () => {
    tmp = await tempDir('depotkit-ca-move-check-');
    // A CA that lapses in 20 days: check warns of it (and of the certificate it issues, which ends with it).
    const [ca, other] = await Promise.all([createCa({ cn: 'New Depot CA', days: 20, keySize: 2048 }), createCa({ cn: 'Unrelated CA', keySize: 2048 })]);
    [issuer, unrelated] = [ca.certPem, other.certPem];
    const leaf = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
    await Promise.all([
      writeFile(f('chain.pem'), leaf.chainPem),
      writeFile(f('key.pem'), leaf.keyPem, { mode: 0o600 }),
      writeFile(f('ca.pem'), ca.certPem),
      writeFile(f('unrelated-ca.pem'), other.certPem),
    ]);
    // The new pair served, as it would be after the switch.
    server = createServer({ cert: leaf.chainPem, key: leaf.keyPem }, (_req, res) => {
      res.writeHead(404);
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    depotUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    opts = {
      newCert: f('chain.pem'),
      newKey: f('key.pem'),
      newCa: f('ca.pem'),
      // Nothing is written there: the plan stops the move first.
      served: { kind: 'site', certFile: f('served-cert.pem'), keyFile: f('served-key.pem') },
      depot: { url: depotUrl, username: 'depot', password: 'unused' },
      consumers: [{ name: 'consumer-0', url: `https://127.0.0.1:${await closedPort()}`, user: 'admin@local', passwordEnv: 'DEPOTKIT_TEST_UNSET' }],
      concurrency: 1,
      timeoutMs: 10_000,
    };
  }, 60_000);
  afterAll(async () => {
    server?.closeAllConnections();
    server?.close();
    await tmp?.cleanup();
  });

  it("a name the consumers use missing from the SAN: the plan's findings are check's for that depot and name, and the move refuses naming check's ids", async () => {
    const names = ['depot.elsewhere.test'];
    const dry = await moveDepotCa({ ...opts, names, dryRun: true });
    expect(dry.ok).toBe(false);
    const expected = [...new Set([...(await checkIds(issuer)), ...(await checkIds(issuer, names[0]))])].sort();
    expect(expected).toEqual(expect.arrayContaining(['cert.san.host-missing', 'tls.ca.expiring-soon']));
    expect(certificateIds(dry.plan.findings)).toEqual(expected);

    const refused = await moveDepotCa({ ...opts, names }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(DepotkitError);
    expect((refused as Error).message).toMatch(/^The new certificate would fail validation: .*depot\.elsewhere\.test.* \(cert\.san\.host-missing\)/);
  });

  it("a new CA that does not anchor the chain: the plan's findings are check's given that CA, and the move refuses naming the id", async () => {
    const dry = await moveDepotCa({ ...opts, newCa: f('unrelated-ca.pem'), dryRun: true });
    expect(dry.ok).toBe(false);
    const expected = await checkIds(unrelated);
    expect(expected).toContain('cert.chain.untrusted');
    expect(certificateIds(dry.plan.findings)).toEqual(expected);

    const refused = await moveDepotCa({ ...opts, newCa: f('unrelated-ca.pem') }).catch((err: unknown) => err);
    expect((refused as Error).message).toMatch(/^The new certificate would fail validation: .*\(cert\.chain\.untrusted\)/);
  });

  it('a certificate check passes: the plan passes with the same warnings', async () => {
    const dry = await moveDepotCa({ ...opts, dryRun: true });
    expect(dry.plan.findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect(certificateIds(dry.plan.findings)).toEqual(await checkIds(issuer));
  });
});
