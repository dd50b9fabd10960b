/**
 * Sync, releases and a new release over consumers of both roles, driven
 * through the library in-process (FleetSession over an inventory, as the
 * commands run it); the command line's own part is in fleet-commands.test.ts.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  FleetSession,
  connectDepot,
  depotCatalogDate,
  ensureSynced,
  listReleases,
  resolveTargets,
  syncConsumer,
  syncedSince,
  InstallerClient,
  type FleetRow,
} from '../../src/installer/index.js';
import { startInstallerSimulator, type InstallerSimulator } from '../../src/simulators/installer/index.js';
import { useTestDepot } from '../helpers/installer-sim.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER, simTls, type TestDepot } from './helpers.js';
import { addRelease } from './release-depot.js';

const SSO_USER = 'administrator@vsphere.local';
const SSO_PASSWORD = 'Sso-Adm1n-Secret!';
const MINUTE = 60_000;

let dir: string;
let depot: TestDepot;
let spec: { url: string; username: string; password: string };

useTestDepot('depotkit-new-release-', (started) => ({ dir, depot } = started));
beforeAll(async () => {
  spec = { url: `https://localhost:${depot.port}`, username: DEPOT_USER, password: DEPOT_PASSWORD };
  await writeFile(join(dir, 'installer.pass'), `${PASSWORD}\n`, { mode: 0o600 });
  await writeFile(join(dir, 'sso.pass'), `${SSO_PASSWORD}\n`, { mode: 0o600 });
});

interface Consumer {
  name: string;
  role: 'installer' | 'sddc-manager';
  version: string;
  /** How far behind the real time its clock runs: its syncs end that long ago. */
  behindMs?: number;
}

/** Simulators for `consumers` and an inventory naming them with their roles and accounts. */
async function fleet(consumers: Consumer[], file: string): Promise<{ sims: InstallerSimulator[]; session: FleetSession; close: () => Promise<void> }> {
  const sims: InstallerSimulator[] = [];
  const entries: string[] = [];
  for (const c of consumers) {
    const users: Record<string, string> = c.role === 'installer' ? { [USER]: PASSWORD } : { [SSO_USER]: SSO_PASSWORD };
    const behind = c.behindMs ?? 0;
    const sim = await startInstallerSimulator({ role: c.role, version: c.version, users, clock: () => Date.now() - behind, tls: await simTls() });
    sims.push(sim);
    await writeFile(join(dir, `${c.name}.pem`), sim.caPem);
    const passwordFile = c.role === 'installer' ? 'installer.pass' : 'sso.pass';
    entries.push(`  - { name: ${c.name}, url: "${sim.url}", role: ${c.role}, passwordFile: ${passwordFile}, installerCa: ${c.name}.pem }`);
  }
  const inventory = join(dir, file);
  await writeFile(inventory, `consumers:\n${entries.join('\n')}\n`);
  const session = new FleetSession(await resolveTargets({ inventory }), { concurrency: 4, timeoutMs: 30_000 });
  return { sims, session, close: async () => void (await Promise.all(sims.map((s) => s.close()))) };
}

const identities = <T>(rows: Array<FleetRow<T>>) => rows.map((r) => [r.name, r.role, r.version]);
const fast = { pollMs: 50, syncPollMs: 50 };

describe('sync and releases on installers and SDDC Managers', () => {
  it('before a depot: releases says no metadata was synced and sync fails with the reason; after connecting, sync says SYNCED and both list the release; every row names the consumer, its role and version', async () => {
    const { sims, session, close } = await fleet(
      [
        { name: 'installer', role: 'installer', version: '9.0.1.0.24962180' },
        { name: 'manager', role: 'sddc-manager', version: '9.1.1.0.25800000' },
      ],
      'two.yaml',
    );
    try {
      const expected = [
        ['installer', 'VcfInstaller', '9.0.1.0.24962180'],
        ['manager', 'SddcManager', '9.1.1.0.25800000'],
      ];
      const before = await session.run(async (client) => ({ ok: true, result: await listReleases(client) }));
      expect(identities(before)).toEqual(expected);
      for (const [i, row] of before.entries()) {
        expect(row.ok).toBe(false);
        expect(row.error!.message).toBe(`${new URL(sims[i]!.url).host} lists no releases: it has synced no depot metadata yet (LCM_MANIFEST_NOT_FOUND).`);
        expect(row.error!.fix).toContain('`connectDepot`');
      }
      const unset = await session.run(async (client) => {
        const result = await syncConsumer(client, { pollMs: 50 });
        return { ok: result.ok, result };
      });
      expect(identities(unset)).toEqual(expected);
      for (const row of unset) expect(row).toMatchObject({ ok: false, error: { message: expect.stringMatching(/^Starting the depot sync failed: /) } });

      const connected = await session.run(async (client) => {
        const result = await connectDepot(client, spec, { caPems: [depot.ca.certPem], ...fast });
        return { ok: result.ok, result };
      });
      expect(connected.map((r) => [r.ok, r.result?.sync?.action, r.result?.releases])).toEqual([
        [true, 'synced', ['9.0.0.0']],
        [true, 'synced', ['9.0.0.0']],
      ]);

      const synced = await session.run(async (client) => {
        const result = await syncConsumer(client, { pollMs: 50 });
        return { ok: result.ok, result };
      });
      expect(identities(synced)).toEqual(expected);
      for (const [i, row] of synced.entries()) {
        expect(row.ok).toBe(true);
        expect(row.result).toMatchObject({ ok: true, status: 'SYNCED', releases: ['9.0.0.0'] });
        // A new sync, not the one connecting made.
        expect(row.result!.completedAt! > connected[i]!.result!.sync!.completedAt!).toBe(true);
      }
      const listed = await session.run(async (client) => ({ ok: true, result: await listReleases(client) }));
      expect(listed.map((r) => r.result!.releases.map((x) => x.version))).toEqual([['9.0.0.0'], ['9.0.0.0']]);
    } finally {
      await close();
    }
  });
});

describe('a new release on the depot, fleet-wide', () => {
  it("connect-depot re-syncs exactly the consumers whose last sync is older than the depot's catalog, says so with the time of that sync, and each lists the new release", async () => {
    // a and b synced ten minutes ago (their clocks run behind); c syncs after the release arrived.
    const { sims, session, close } = await fleet(
      [
        { name: 'a', role: 'installer', version: '9.0.1.0.24962180', behindMs: 10 * MINUTE },
        { name: 'b', role: 'sddc-manager', version: '9.1.0.0.25368698', behindMs: 10 * MINUTE },
        { name: 'c', role: 'sddc-manager', version: '9.1.1.0.25800000' },
      ],
      'three.yaml',
    );
    try {
      const connect = (catalog: Awaited<ReturnType<typeof depotCatalogDate>>) =>
        session.run(async (client) => {
          const result = await connectDepot(client, spec, { caPems: [depot.ca.certPem], catalog, ...fast });
          return { ok: result.ok, result };
        });
      const first = await connect(await depotCatalogDate(spec, { caPems: [depot.ca.certPem] }));
      expect(first.every((r) => r.ok && r.result!.sync!.action === 'synced')).toBe(true);

      // The release arrives five minutes ago, after a's and b's syncs; then c syncs on its own.
      const arrived = new Date(Math.floor((Date.now() - 5 * MINUTE) / 1000) * 1000);
      await addRelease(join(dir, 'depot'), '9.0.1.0', ['VCENTER', 'NSX_T_MANAGER'], 2048, arrived);
      const catalog = await depotCatalogDate(spec, { caPems: [depot.ca.certPem] });
      expect(catalog).toEqual({ lastModified: arrived });
      const cSession = new FleetSession(session.targets.slice(2), { concurrency: 1, timeoutMs: 30_000 });
      const [cSync] = await cSession.run(async (client) => ({ ok: true, result: await syncConsumer(client, { pollMs: 50 }) }));
      expect(cSync!.result!.releases).toEqual(['9.0.0.0', '9.0.1.0']);

      const again = await connect(catalog);
      expect(identities(again)).toEqual([
        ['a', 'VcfInstaller', '9.0.1.0.24962180'],
        ['b', 'SddcManager', '9.1.0.0.25368698'],
        ['c', 'SddcManager', '9.1.1.0.25800000'],
      ]);
      for (const [i, row] of again.entries()) {
        expect(row.ok).toBe(true);
        expect(row.result!.push.action).toBe('unchanged');
        expect(row.result!.releases).toEqual(['9.0.0.0', '9.0.1.0']);
        if (i < 2) {
          expect(row.result!.sync).toMatchObject({
            action: 'resynced',
            reason: 'catalog-changed',
            previousSyncAt: first[i]!.result!.sync!.completedAt,
            ok: true,
          });
        } else {
          expect(row.result!.sync).toMatchObject({ action: 'already-synced', completedAt: cSync!.result!.completedAt });
        }
      }
      // Only the stale ones read the depot's metadata again.
      const syncs = (sim: InstallerSimulator) => sim.logs.filter((l) => l.includes('Syncing the depot metadata')).length;
      expect(sims.map(syncs)).toEqual([2, 2, 2]);
    } finally {
      await close();
    }
  });

  it('a depot that gives no date for its catalog, or cannot be asked, has every consumer sync again; a time that cannot be read counts as before', async () => {
    const unreachable = await depotCatalogDate({ url: 'https://127.0.0.1:1' }, { timeoutMs: 2000 });
    expect(unreachable.lastModified).toBeUndefined();
    expect(unreachable.note).toMatch(/^the depot cannot be reached from here: /);
    const untrusted = await depotCatalogDate(spec);
    expect(untrusted.lastModified).toBeUndefined();
    const refused = await depotCatalogDate({ ...spec, password: 'wrong' }, { caPems: [depot.ca.certPem] });
    expect(refused).toEqual({ note: 'the depot answered HTTP 401 for its catalog' });

    const sim = await startInstallerSimulator({ users: { [USER]: PASSWORD }, tls: await simTls() });
    const client = await InstallerClient.connect({ url: sim.url, user: USER, password: PASSWORD, trust: { caPems: [sim.caPem] } });
    try {
      await connectDepot(client, spec, { caPems: [depot.ca.certPem], ...fast });
      const resynced = await ensureSynced(client, { settingsChanged: false, catalog: { note: refused.note }, pollMs: 50 });
      expect(resynced).toMatchObject({ action: 'resynced', reason: 'catalog-undated', catalogNote: 'the depot answered HTTP 401 for its catalog', ok: true });
      // Without a catalog date asked for, SYNCED is taken as up to date (as before).
      expect((await ensureSynced(client, { settingsChanged: false, pollMs: 50 })).action).toBe('already-synced');
    } finally {
      await client.close();
      await sim.close();
    }
    const at = new Date('2026-01-01T10:00:00Z');
    expect(syncedSince('2026-01-01T10:00:01.000Z', at)).toBe(true);
    // Within the second of the change: the catalog's date counts whole seconds, so this sync may have read the old one.
    expect(syncedSince('2026-01-01T10:00:00.900Z', at)).toBe(false);
    expect(syncedSince(String(at.getTime() + 5000), at)).toBe(true);
    expect(syncedSince('yesterday', at)).toBe(false);
    expect(syncedSince(undefined, at)).toBe(false);
  });
});
