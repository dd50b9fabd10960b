import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InstallerClient, ensureTrusted, pushDepot, removeTrusted, type FleetRow } from '../../src/installer/index.js';
import { createCa, issueServerCert, sha256Fingerprint } from '../../src/cert/index.js';
import type { InstallerSimulator } from '../../src/simulators/installer/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { withSim } from '../helpers/installer-sim.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER, depotCa, startTestDepot } from './helpers.js';

/** A name under `.invalid`, which never resolves (RFC 6761): the consumer reaches the depot by it, this machine cannot. */
const FAR_NAME = 'depot.untrust.invalid';

let tmp: { dir: string; cleanup: () => Promise<void> };
let otherPem: string;
beforeAll(async () => {
  tmp = await tempDir('depotkit-untrust-');
  otherPem = (await createCa({ cn: 'Unrelated CA', keySize: 2048 })).certPem;
});
afterAll(() => tmp?.cleanup());

function connect(sim: InstallerSimulator): Promise<InstallerClient> {
  return InstallerClient.connect({ url: sim.url, user: USER, password: PASSWORD, trust: { caPems: [sim.caPem] } });
}

async function listed(client: InstallerClient): Promise<string[]> {
  return (await client.listTrusted()).elements.map((e) => sha256Fingerprint(e.certificate)).sort();
}

describe('removing trust when the depot cannot be read from here', () => {
  it("refuses the depot's CA (and any other) while the consumer's depot name does not resolve here; the consumer still validates its depot; force removes it", async () => {
    const ca = await depotCa();
    const depot = await startTestDepot(join(tmp.dir, 'far'), { cert: await issueServerCert(ca, { dns: [FAR_NAME], keySize: 2048 }) });
    try {
      await withSim(
        async (sim) => {
          const client = await connect(sim);
          try {
            await ensureTrusted(client, [ca.certPem, otherPem]);
            const spec = { hostname: FAR_NAME, port: depot.port, username: DEPOT_USER, password: DEPOT_PASSWORD };
            expect((await pushDepot(client, spec)).ok).toBe(true);
            const before = await listed(client);

            const refusal = removeTrusted(client, [ca.certPem], { timeoutMs: 5000 });
            await expect(refusal).rejects.toThrow(
              `The chain the configured depot ${FAR_NAME}:${depot.port} sends cannot be read from here (the host name does not resolve`,
            );
            await expect(refusal).rejects.toThrow(`CN=depotkit installer test CA (SHA-256 ${sha256Fingerprint(ca.certPem)})`);
            await expect(refusal).rejects.toMatchObject({ exitCode: 1, fix: expect.stringContaining('`force`') });
            // Nothing proves an unrelated CA is not the anchor either.
            await expect(removeTrusted(client, [otherPem])).rejects.toThrow(/cannot be read from here/);
            expect(await listed(client)).toEqual(before);
            // The consumer, which resolves the name, still validates its depot.
            expect(await pushDepot(client, spec, { force: true })).toMatchObject({ ok: true });

            expect(await removeTrusted(client, [ca.certPem], { force: true })).toMatchObject([{ action: 'removed' }]);
            expect(await pushDepot(client, spec, { force: true })).toMatchObject({ ok: false });
          } finally {
            await client.close();
          }
        },
        { resolve: { [FAR_NAME]: '127.0.0.1' } },
      );
    } finally {
      await depot.close();
    }
  });

  it("refuses while the consumer's depot is down, removes an unrelated CA once the depot answers, and needs nothing of a consumer with no depot", async () => {
    const ca = await depotCa();
    let depot = await startTestDepot(join(tmp.dir, 'down'));
    const port = depot.port;
    try {
      await withSim(async (sim) => {
        const client = await connect(sim);
        try {
          // No depot set: nothing to keep.
          await ensureTrusted(client, [otherPem]);
          expect(await removeTrusted(client, [otherPem])).toMatchObject([{ action: 'removed' }]);

          await ensureTrusted(client, [ca.certPem, otherPem]);
          expect((await pushDepot(client, { hostname: 'localhost', port, username: DEPOT_USER, password: DEPOT_PASSWORD })).ok).toBe(true);
          await depot.close();
          const before = await listed(client);
          await expect(removeTrusted(client, [ca.certPem])).rejects.toThrow(
            `The chain the configured depot localhost:${port} sends cannot be read from here (the connection was refused (ECONNREFUSED))`,
          );
          await expect(removeTrusted(client, [otherPem])).rejects.toThrow(/cannot be read from here/);
          expect(await listed(client)).toEqual(before);

          // The command line: exit 1, the depot and the certificate named, --force as the way out.
          const caFile = join(tmp.dir, 'depot-ca.pem');
          const simCa = join(tmp.dir, 'sim-ca.pem');
          await Promise.all([writeFile(caFile, ca.certPem), writeFile(simCa, sim.caPem)]);
          const env = { ...process.env, DEPOTKIT_TEST_UNTRUST_PASSWORD: PASSWORD };
          const args = ['installer', 'trust', '--remove', '--installer', sim.url, '--user', USER, '--password-env', 'DEPOTKIT_TEST_UNTRUST_PASSWORD'];
          const cli = await runCli([...args, '--installer-ca', simCa, '--ca', caFile, '--json'], { env });
          expect(cli.code).toBe(1);
          const row = (JSON.parse(cli.stdout) as { installers: Array<FleetRow<unknown>> }).installers[0]!;
          expect(row.error!.message).toContain(`configured depot localhost:${port}`);
          expect(row.error!.message).toContain('CN=depotkit installer test CA (SHA-256 ');
          expect(row.error!.fix).toContain('--force');
          expect(await listed(client)).toEqual(before);

          // Back on its port: the chain is read, the unrelated CA goes, the depot's stays refused.
          depot = await startTestDepot(join(tmp.dir, 'down'), { port });
          expect(await removeTrusted(client, [otherPem])).toMatchObject([{ action: 'removed' }]);
          await expect(removeTrusted(client, [ca.certPem])).rejects.toThrow(`anchors the certificate chain the configured depot localhost:${port} sends`);
        } finally {
          await client.close();
        }
      });
    } finally {
      await depot.close();
    }
  });
});
