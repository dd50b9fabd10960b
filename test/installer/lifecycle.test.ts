/**
 * After the depot settings: the simulated installer syncs the depot's
 * metadata and downloads the bundles of a release from it, for real, as the
 * lab-deployment script and the vendor's SDK samples drive it.
 */
import { createHash } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import type { InstallerSimulator } from '../../src/simulators/installer/index.js';
import { useTestDepot } from '../helpers/installer-sim.js';
import { call, depotSettings, login, startSim, type TestDepot } from './helpers.js';
import { until } from '../helpers/poll.js';

const CERTS = '/v1/sddc-manager/trusted-certificates';
const DEPOT = '/v1/system/settings/depot';
const SYNC = '/v1/system/settings/depot/depot-sync-info';

interface StatusRow {
  bundleId: string;
  componentType: string;
  downloadStatus: string;
  downloadedSize: number;
  message?: string;
}

let dir: string;
let depot: TestDepot;
let root: string;

useTestDepot('depotkit-installer-lifecycle-', (started) => ({ dir, depot } = started));
beforeAll(async () => {
  root = join(dir, 'depot');
});

async function withSim<T>(fn: (sim: InstallerSimulator, token: string) => Promise<T>, opts: Parameters<typeof startSim>[0] = {}): Promise<T> {
  const sim = await startSim(opts);
  try {
    const { accessToken } = await login(sim);
    await call(sim, 'POST', CERTS, { token: accessToken, body: { certificate: depot.ca.certPem, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' } });
    expect((await call(sim, 'PUT', DEPOT, { token: accessToken, body: depotSettings(depot.host, depot.port) })).status).toBe(202);
    return await fn(sim, accessToken);
  } finally {
    await sim.close();
  }
}

async function sync(sim: InstallerSimulator, token: string): Promise<{ syncStatus: string; errorMessage?: string; lastSyncCompletionTimestamp?: string }> {
  const started = await call(sim, 'PATCH', SYNC, { token });
  expect(started.status).toBe(202);
  const info = await until(
    async () => (await call(sim, 'GET', SYNC, { token })).body as { syncStatus: string },
    (b) => b.syncStatus === 'SYNCED' || b.syncStatus === 'SYNC_FAILED',
    'the sync',
  );
  return info;
}

/** Moves a depot file aside for the duration of `fn`. */
async function without<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const full = join(root, path);
  const saved = await readFile(full);
  await rm(full);
  try {
    return await fn();
  } finally {
    await writeFile(full, saved);
  }
}

describe('depot sync', () => {
  it('reads the whole metadata and shows SYNCED with the completion time; machine details answer', async () => {
    await withSim(async (sim, token) => {
      expect((await call(sim, 'GET', SYNC, { token })).body).toEqual({ syncStatus: 'NOT_SYNCED' });
      const info = await sync(sim, token);
      expect(info).toEqual({ syncStatus: 'SYNCED', lastSyncCompletionTimestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
      const log = sim.logs.join('\n');
      for (const path of [
        DEPOT_PATHS.manifest,
        DEPOT_PATHS.catalog,
        DEPOT_PATHS.catalogSig,
        DEPOT_PATHS.compatibility,
        DEPOT_PATHS.hclAll,
        DEPOT_PATHS.hclLastUpdated,
      ]) {
        expect(log).toContain(`${path} -> 200`);
      }
      const machine = await call(sim, 'GET', '/v1/system/settings/depot/machine-details', { token });
      expect(machine.body).toEqual({ machineId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    });
  });

  it('fails without the Compatibility data or the manifest, naming what is missing as the installer does', async () => {
    await withSim(async (sim, token) => {
      const noCompat = await without(DEPOT_PATHS.compatibility, () => sync(sim, token));
      expect(noCompat.syncStatus).toBe('SYNC_FAILED');
      expect(noCompat.errorMessage).toContain('Vmware compatibility data download failed');
      const noManifest = await without(DEPOT_PATHS.manifest, () => sync(sim, token));
      expect(noManifest.syncStatus).toBe('SYNC_FAILED');
      expect(noManifest.errorMessage).toMatch(/^LCM_MANIFEST_NOT_FOUND: /);
      expect(noManifest.lastSyncCompletionTimestamp).toBeDefined();
      // Nothing synced: no manifest to list releases from.
      expect((await call(sim, 'GET', '/v1/releases', { token })).body).toMatchObject({ errorCode: 'LCM_MANIFEST_NOT_FOUND' });
    });
  });

  it('needs depot settings first, and forgets everything when they are deleted', async () => {
    const sim = await startSim();
    try {
      const { accessToken } = await login(sim);
      const refused = await call(sim, 'PATCH', SYNC, { token: accessToken });
      expect(refused.status).toBe(400);
      expect((refused.body as { errorCode: string }).errorCode).toBe('DEPOT_NOT_CONFIGURED');
    } finally {
      await sim.close();
    }
    await withSim(async (sim, token) => {
      await sync(sim, token);
      expect((await call(sim, 'DELETE', `${DEPOT}?depotType=OFFLINE`, { token })).status).toBe(204);
      expect((await call(sim, 'GET', SYNC, { token })).body).toEqual({ syncStatus: 'NOT_SYNCED' });
      expect((await call(sim, 'GET', DEPOT, { token })).body).toEqual({});
    });
  });
});

describe('releases and bundle downloads', () => {
  it("lists the release's components and downloads every bundle as the lab-deployment script asks, validating size and SHA-256", async () => {
    const store = join(dir, 'store');
    await withSim(
      async (sim, token) => {
        await sync(sim, token);
        const releases = (await call(sim, 'GET', '/v1/releases', { token })).body as { elements: Array<{ version: string; bom: unknown[] }> };
        expect(releases.elements).toHaveLength(1);
        const version = releases.elements[0]!.version;
        const components = await call(sim, 'GET', `/v1/releases/VCF/release-components?releaseVersion=${version}&automatedInstall=true&imageType=INSTALL`, {
          token,
        });
        expect(components.status).toBe(200);
        const element = (
          components.body as {
            elements: Array<{
              releaseVersion: string;
              components: Array<{ name: string; versions: Array<{ artifacts: { bundles: Array<{ id: string; size: number }> } }> }>;
            }>;
          }
        ).elements[0]!;
        expect(element.releaseVersion).toBe(version);
        const ids = element.components.flatMap((c) => c.versions.flatMap((v) => v.artifacts.bundles.map((b) => b.id)));
        expect(ids.length).toBeGreaterThanOrEqual(7);
        expect(new Set(ids).size).toBe(ids.length);

        // Synced, bundles wait to be asked for.
        const before = (await call(sim, 'GET', `/v1/bundles/download-status?releaseVersion=${version}&imageType=INSTALL`, { token })).body as {
          elements: StatusRow[];
        };
        expect(before.elements.map((e) => e.downloadStatus)).toEqual(ids.map(() => 'PENDING'));

        for (const id of ids) {
          const started = await call(sim, 'PATCH', `/v1/bundles/${id}`, { token, body: { bundleDownloadSpec: { downloadNow: true } } });
          expect(started.status).toBe(202);
        }
        const done = await until(
          async () =>
            ((await call(sim, 'GET', `/v1/bundles/download-status?releaseVersion=${version}&imageType=INSTALL`, { token })).body as { elements: StatusRow[] })
              .elements,
          (rows) => rows.every((r) => r.downloadStatus === 'SUCCESS' || r.downloadStatus === 'FAILED'),
          'the downloads',
        );
        expect(done.map((r) => r.downloadStatus)).toEqual(ids.map(() => 'SUCCESS'));

        // Asked again: already downloaded, which field clients take as done.
        const again = await call(sim, 'PATCH', `/v1/bundles/${ids[0]}`, { token, body: { bundleDownloadSpec: { downloadNow: true } } });
        expect(again.status).toBe(409);
        expect((again.body as { errorCode: string }).errorCode).toBe('BUNDLE_DOWNLOAD_ALREADY_DOWNLOADED');

        const bundle = (await call(sim, 'GET', `/v1/bundles/${ids[0]}`, { token })).body as { downloadStatus: string; components: Array<{ type: string }> };
        expect(bundle.downloadStatus).toBe('SUCCESS');
        expect((await call(sim, 'GET', '/v1/bundles', { token })).body).toMatchObject({
          elements: expect.arrayContaining([expect.objectContaining({ id: ids[0] })]),
        });

        // The store holds the files exactly as the depot serves them.
        const catalogPath = join(root, DEPOT_PATHS.catalog);
        const catalog = JSON.parse(await readFile(catalogPath, 'utf8')) as {
          patches: Record<string, Array<{ artifacts: { bundles: Array<{ binaries: Array<{ fileName: string; checksum: string }> }> } }>>;
        };
        const [component, versions] = Object.entries(catalog.patches)[0]!;
        const binary = versions[0]!.artifacts.bundles[0]!.binaries[0]!;
        const stored = await readFile(join(store, 'PROD/COMP', component, binary.fileName));
        expect(createHash('sha256').update(stored).digest('hex')).toBe(binary.checksum);

        // Deleted, it can be downloaded again.
        expect((await call(sim, 'DELETE', `/v1/bundles/${ids[0]}`, { token })).status).toBe(204);
        expect(((await call(sim, 'GET', `/v1/bundles/${ids[0]}`, { token })).body as { downloadStatus: string }).downloadStatus).toBe('PENDING');
        expect((await call(sim, 'GET', '/v1/bundles/no-such-bundle', { token })).status).toBe(404);
      },
      { store },
    );
  });

  it('ends a bundle FAILED naming the file and the reason: a corrupted binary, a missing one', async () => {
    await withSim(async (sim, token) => {
      await sync(sim, token);
      const catalog = JSON.parse(await readFile(join(root, DEPOT_PATHS.catalog), 'utf8')) as { patches: Record<string, Array<{ productVersion: string }>> };
      const components = Object.keys(catalog.patches);
      const bundles = ((await call(sim, 'GET', '/v1/bundles', { token })).body as { elements: Array<{ id: string; components: Array<{ type: string }> }> })
        .elements;
      const idOf = (component: string) => bundles.find((b) => b.components[0]!.type === component)!.id;
      const [corrupt, missing] = [components[0]!, components[1]!];
      const binaryPath = async (component: string) => {
        const files = (
          JSON.parse(await readFile(join(root, DEPOT_PATHS.catalog), 'utf8')) as {
            patches: Record<string, Array<{ artifacts: { bundles: Array<{ binaries: Array<{ fileName: string }> }> } }>>;
          }
        ).patches[component]![0]!.artifacts.bundles[0]!.binaries[0]!.fileName;
        return `PROD/COMP/${component}/${files}`;
      };
      const corruptPath = await binaryPath(corrupt);
      const missingPath = await binaryPath(missing);
      const original = await readFile(join(root, corruptPath));
      const flipped = Buffer.from(original);
      flipped[0] = flipped[0]! ^ 0xff;
      await writeFile(join(root, corruptPath), flipped);
      const missingSaved = await readFile(join(root, missingPath));
      await rm(join(root, missingPath));
      try {
        for (const component of [corrupt, missing]) {
          expect((await call(sim, 'PATCH', `/v1/bundles/${idOf(component)}`, { token, body: { bundleDownloadSpec: { downloadNow: true } } })).status).toBe(202);
        }
        const rows = await until(
          async () =>
            ((await call(sim, 'GET', '/v1/bundles/download-status', { token })).body as { elements: StatusRow[] }).elements.filter(
              (r) => r.downloadStatus !== 'PENDING',
            ),
          (r) => r.length === 2 && r.every((x) => x.downloadStatus === 'FAILED' || x.downloadStatus === 'SUCCESS'),
          'the failures',
        );
        const byComponent = Object.fromEntries(rows.map((r) => [r.componentType, r]));
        expect(byComponent[corrupt]).toMatchObject({ downloadStatus: 'FAILED', message: expect.stringContaining(`${corruptPath}: checksum mismatch`) });
        expect(byComponent[missing]).toMatchObject({ downloadStatus: 'FAILED', message: expect.stringContaining(`${missingPath}: HTTP 404`) });
        // A failed bundle may be asked for again (field clients delete and retry).
        await writeFile(join(root, corruptPath), original);
        expect((await call(sim, 'PATCH', `/v1/bundles/${idOf(corrupt)}`, { token, body: { bundleDownloadSpec: { downloadNow: true } } })).status).toBe(202);
        await until(
          async () => ((await call(sim, 'GET', `/v1/bundles/${idOf(corrupt)}`, { token })).body as { downloadStatus: string }).downloadStatus,
          (s) => s === 'SUCCESS',
          'the retry',
        );
      } finally {
        await writeFile(join(root, corruptPath), original);
        await writeFile(join(root, missingPath), missingSaved);
      }
    });
  });
});

describe('connections to the depot', () => {
  it('validates the depot over one kept-alive connection, syncs over one more that resumes its TLS session, and starts afresh once its trust changes', async () => {
    const listener = depot.server.listener as HttpsServer;
    const handshakes: string[] = [];
    const requests: string[] = [];
    const connection = new WeakMap<object, number>();
    const onSecure = (socket: TLSSocket) => {
      connection.set(socket, handshakes.length);
      handshakes.push(socket.isSessionReused() ? 'resumed' : 'full');
    };
    const onRequest = (req: IncomingMessage) => requests.push(`${req.method} on ${connection.get(req.socket)}`);
    listener.on('secureConnection', onSecure).on('request', onRequest);
    try {
      await withSim(async (sim, token) => {
        // withSim's depot update: HEAD, GET of the catalog and of its signature, one handshake.
        expect(handshakes).toEqual(['full']);
        expect(requests).toEqual(['HEAD on 0', 'GET on 0', 'GET on 0']);
        expect((await sync(sim, token)).syncStatus).toBe('SYNCED');
        expect(handshakes).toEqual(['full', 'resumed']);
        expect(new Set(requests.slice(3))).toEqual(new Set(['GET on 1']));

        // Another certificate trusted: no session checked with the old trust is offered.
        const imported = await call(sim, 'POST', CERTS, { token, body: { certificate: sim.caPem, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' } });
        expect(imported.status).toBe(200);
        expect((await call(sim, 'PUT', DEPOT, { token, body: depotSettings(depot.host, depot.port) })).status).toBe(202);
        expect(handshakes).toEqual(['full', 'resumed', 'full']);
      });
    } finally {
      listener.off('secureConnection', onSecure).off('request', onRequest);
    }
  });
});
