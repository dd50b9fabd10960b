import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InstallerClient, ensureTrusted, pushDepot, type InstallerTarget } from '../../src/installer/index.js';
import { createCa, sha256Fingerprint, type CaMaterial } from '../../src/cert/index.js';
import { retireOldCa } from '../../src/procedures/ca-move/retire.js';
import { ConsumerSessions } from '../../src/procedures/ca-move/sessions.js';
import { startInstallerSimulator, type InstallerSimulator } from '../../src/simulators/installer/index.js';
import { tempDir } from '../helpers/temp.js';
import { PASSWORD, USER, depotCa, startTestDepot, type TestDepot } from '../installer/helpers.js';
import { depotSpec } from './ca-move-fixture.js';

/**
 * After a move: the depot serves a certificate of the new CA; the consumer
 * trusts the new CA, the served certificate itself and the old CA, the old
 * one under two aliases (its state restored with a renamed copy of the entry).
 */
let tmp: { dir: string; cleanup: () => Promise<void> };
let depot: TestDepot;
let newCa: CaMaterial;
let oldCa: CaMaterial;
let sim: InstallerSimulator;
let target: InstallerTarget;
const RESTORED_ALIAS = 'old-depot-ca-restored';

beforeAll(async () => {
  tmp = await tempDir('depotkit-ca-move-retire-');
  [newCa, oldCa] = await Promise.all([depotCa(), createCa({ cn: 'Old Depot CA', keySize: 2048 })]);
  depot = await startTestDepot(tmp.dir);
  const stateFile = join(tmp.dir, 'consumer.json');
  const first = await startInstallerSimulator({ users: { [USER]: PASSWORD }, stateFile });
  await withClient(first, async (client) => {
    await ensureTrusted(client, [oldCa.certPem, newCa.certPem, depot.certPem]);
    expect((await pushDepot(client, depotSpec(`https://localhost:${depot.port}`))).ok).toBe(true);
  });
  await first.close();
  const state = JSON.parse(await readFile(stateFile, 'utf8')) as { trustedCertificates: Array<{ alias: string; sha256: string }> };
  const old = state.trustedCertificates.find((e) => e.sha256 === sha256Fingerprint(oldCa.certPem))!;
  state.trustedCertificates.push({ ...old, alias: RESTORED_ALIAS });
  await writeFile(stateFile, JSON.stringify(state));
  sim = await startInstallerSimulator({ users: { [USER]: PASSWORD }, stateFile });
  target = { name: 'consumer-0', url: sim.url, user: USER, insecure: true };
}, 120_000);
afterAll(async () => {
  await sim?.close();
  await depot?.close();
  await tmp?.cleanup();
});

async function withClient<T>(consumer: InstallerSimulator, fn: (client: InstallerClient) => Promise<T>): Promise<T> {
  const client = await InstallerClient.connect({ url: consumer.url, user: USER, password: PASSWORD, trust: { insecure: true } });
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

/** The aliases the consumer lists each certificate under. */
function aliasesOf(pems: string[]): Promise<string[][]> {
  return withClient(sim, async (client) => {
    const { elements } = await client.listTrusted();
    return pems.map((pem) => elements.filter((e) => sha256Fingerprint(e.certificate) === sha256Fingerprint(pem)).map((e) => e.alias));
  });
}

const validates = (): Promise<boolean> =>
  withClient(sim, async (client) => (await pushDepot(client, depotSpec(`https://localhost:${depot.port}`), { force: true })).ok);

function retire(pem: string) {
  const sessions = new ConsumerSessions({ concurrency: 1, timeoutMs: 10_000, passwords: new Map([[USER, PASSWORD]]) });
  return retireOldCa(sessions, [target], {
    oldCaPem: pem,
    newCaPem: newCa.certPem,
    timeoutMs: 10_000,
    reach: { origin: `https://localhost:${depot.port}`, serverName: 'localhost' },
  }).finally(() => sessions.close());
}

describe('the CA move retiring the old CA', () => {
  it('told to remove the new CA, keeps it on every consumer, which still validates the depot', async () => {
    const [row] = await retire(newCa.certPem);
    expect(row).toMatchObject({ ok: false, error: { message: expect.stringContaining("CN=depotkit installer test CA is the move's new CA") } });
    expect(row!.error!.fix).toContain('`oldCa`');
    expect((await aliasesOf([newCa.certPem]))[0]).toHaveLength(1);
    expect(await validates()).toBe(true);
  });

  it('told to remove another certificate the served chain needs (the served certificate itself), keeps it', async () => {
    const [row] = await retire(depot.certPem);
    expect(row).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining(`anchors the certificate chain the configured depot localhost:${depot.port} sends`) },
    });
    expect((await aliasesOf([depot.certPem]))[0]).toHaveLength(1);
  });

  it('removes the old CA under every alias it is listed under, and the consumer still validates the depot', async () => {
    const [before] = await aliasesOf([oldCa.certPem]);
    expect(before).toHaveLength(2);
    expect(before).toContain(RESTORED_ALIAS);
    const [row] = await retire(oldCa.certPem);
    expect(row).toMatchObject({ ok: true, result: [{ action: 'removed', subject: 'CN=Old Depot CA', sha256: sha256Fingerprint(oldCa.certPem) }] });
    expect([...row!.result![0]!.aliases].sort()).toEqual([...before!].sort());
    expect(await aliasesOf([oldCa.certPem, newCa.certPem])).toEqual([[], [expect.any(String)]]);
    expect(await validates()).toBe(true);
  });
});
