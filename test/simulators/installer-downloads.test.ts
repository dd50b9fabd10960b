/**
 * The vendor's Python SDK download sample run against the simulated installer, and run again
 * while the downloads it asked for are still under way (a re-run after an interruption): the
 * second run must meet only the errorCodes the sample takes as "already asked for". The depot
 * holds every binary's answer until the test lets it go, so the states are known, not timed.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE_DOWNLOAD_STATUS } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { issueServerCert } from '../../src/cert/index.js';
import { repeatedDownloadRefusal } from '../../src/simulators/installer/routes/bundles.js';
import { tempDir } from '../helpers/temp.js';
import { withSim } from '../helpers/installer-sim.js';
import { until } from '../helpers/poll.js';
import { SDK_DOWNLOAD_ERRORS_TO_IGNORE, sdkBundlesDownloaded } from '../helpers/public-clients.js';
import { InstallerClient } from '../../src/installer/client.js';
import { call, depotCa, login, PASSWORD, USER } from '../installer/helpers.js';
import type { InstallerSimulator } from '../../src/simulators/installer/index.js';

const CERTS = '/v1/sddc-manager/trusted-certificates';

/** An open HTTPS depot whose binaries (PROD/COMP/) wait while it is held. */
interface HeldDepot {
  port: number;
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

async function startHeldDepot(root: string): Promise<HeldDepot> {
  const ca = await depotCa();
  const cert = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  let held: { promise: Promise<void>; release: () => void } | undefined;
  const server: Server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    void (async () => {
      const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'https://depot').pathname));
      if (held && path.startsWith('/PROD/COMP/')) await held.promise;
      try {
        const file = join(root, path);
        const { size } = await stat(file);
        res.writeHead(200, { 'content-length': size });
        if (req.method === 'HEAD') res.end();
        else createReadStream(file).pipe(res);
      } catch {
        res.writeHead(404).end();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    hold: () => {
      let release = () => {};
      const promise = new Promise<void>((resolve) => (release = resolve));
      held = { promise, release };
    },
    release: () => {
      held?.release();
      held = undefined;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let tmp: { dir: string; cleanup: () => Promise<void> };
let depot: HeldDepot;

beforeAll(async () => {
  tmp = await tempDir('depotkit-sim-downloads-');
  const root = join(tmp.dir, 'depot');
  await makeDemoDepot(root, { binarySize: 1024, force: true, signingDir: join(tmp.dir, 'signing') });
  depot = await startHeldDepot(root);
});
afterAll(async () => {
  depot?.release();
  await depot?.close();
  await tmp?.cleanup();
});

/** The sample's start_bundles_download: every bundle asked for; a refusal it does not ignore raises. */
async function startBundlesDownload(sim: InstallerSimulator, token: string, ids: string[]): Promise<string[]> {
  const codes: string[] = [];
  for (const id of ids) {
    const reply = await call(sim, 'PATCH', `/v1/bundles/${id}`, { token, body: { bundleDownloadSpec: { downloadNow: true } } });
    if (reply.status >= 300) {
      const code = (reply.body as { errorCode: string }).errorCode;
      expect(SDK_DOWNLOAD_ERRORS_TO_IGNORE, `bundle ${id}: ${reply.status} ${code}`).toContain(code);
      codes.push(code);
    }
  }
  return codes;
}

describe("the vendor's Python SDK download sample", () => {
  it('run again while its downloads are scheduled or under way, and once they are done, meets only the codes it ignores', async () => {
    await withSim(async (sim) => {
      const { accessToken: token } = await login(sim);
      await call(sim, 'POST', CERTS, { token, body: { certificate: (await depotCa()).certPem, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' } });
      // An open depot: any user name works over hostname and port.
      const settings = {
        offlineAccount: { username: 'any', password: 'any' },
        depotConfiguration: { isOfflineDepot: true, hostname: 'localhost', port: depot.port },
      };
      expect((await call(sim, 'PUT', '/v1/system/settings/depot', { token, body: settings })).status).toBe(202);

      // force_sync_depot: PATCH, then poll for SYNCED (SYNC_FAILED raises).
      expect((await call(sim, 'PATCH', '/v1/system/settings/depot/depot-sync-info', { token })).status).toBe(202);
      const synced = await until(
        async () => ((await call(sim, 'GET', '/v1/system/settings/depot/depot-sync-info', { token })).body as { syncStatus: string }).syncStatus,
        (s) => s === 'SYNCED' || s === 'SYNC_FAILED',
        'the sync',
      );
      expect(synced).toBe('SYNCED');

      const version = ((await call(sim, 'GET', '/v1/releases', { token })).body as { elements: Array<{ version: string }> }).elements[0]!.version;
      const query = `releaseVersion=${version}&imageType=INSTALL`;
      const components = (await call(sim, 'GET', `/v1/releases/VCF/release-components?${query}&automatedInstall=true`, { token })).body as {
        elements: Array<{ components: Array<{ versions: Array<{ artifacts: { bundles: Array<{ id: string }> } }> }> }>;
      };
      const ids = components.elements[0]!.components.flatMap((c) => c.versions[0]!.artifacts.bundles.map((b) => b.id));
      expect(ids.length).toBeGreaterThan(4);
      const statuses = async () =>
        ((await call(sim, 'GET', `/v1/bundles/download-status?${query}`, { token })).body as { elements: Array<{ bundleId: string; downloadStatus: string }> })
          .elements;

      depot.hold();
      expect(await startBundlesDownload(sim, token, ids)).toEqual([]);
      // Four download at once, each waiting on the held depot; the others wait their turn.
      const under = new Set((await statuses()).filter((r) => ids.includes(r.bundleId)).map((r) => r.downloadStatus));
      expect(under).toEqual(new Set([BUNDLE_DOWNLOAD_STATUS.inProgress, BUNDLE_DOWNLOAD_STATUS.scheduled]));
      expect(await startBundlesDownload(sim, token, ids)).toEqual(ids.map(() => 'BUNDLE_DOWNLOAD_ALREADY_SCHEDULED'));
      // depotkit's own client takes another client's scheduled download as one to follow, not a failure.
      const client = new InstallerClient(new URL(sim.url), { url: sim.url, user: USER, password: PASSWORD, trust: { caPems: [sim.caPem] } });
      expect(await client.startBundleDownload(ids[0]!)).toBe('in-progress');

      depot.release();
      await until(async () => sdkBundlesDownloaded(await statuses(), ids), 'the downloads', { timeoutMs: 60_000 });
      expect(await startBundlesDownload(sim, token, ids)).toEqual(ids.map(() => 'BUNDLE_DOWNLOAD_ALREADY_DOWNLOADED'));
    });
  }, 90_000);

  it('is refused NOT_AVAILABLE for a bundle being validated, and may download a pending or failed one', () => {
    const code = (status: (typeof BUNDLE_DOWNLOAD_STATUS)[keyof typeof BUNDLE_DOWNLOAD_STATUS]) => repeatedDownloadRefusal(status, 'b')?.errorCode;
    expect(code(BUNDLE_DOWNLOAD_STATUS.validating)).toBe('BUNDLE_DOWNLOAD_NOT_AVAILABLE');
    expect(code(BUNDLE_DOWNLOAD_STATUS.pending)).toBeUndefined();
    expect(code(BUNDLE_DOWNLOAD_STATUS.failed)).toBeUndefined();
    for (const status of Object.values(BUNDLE_DOWNLOAD_STATUS)) {
      const refused = code(status);
      if (refused !== undefined) expect(SDK_DOWNLOAD_ERRORS_TO_IGNORE).toContain(refused);
    }
  });
});
