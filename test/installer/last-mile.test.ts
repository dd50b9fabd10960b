/**
 * The last mile: the installer accepts the depot, syncs its metadata and
 * downloads every bundle of a release from it, from depotkit's server and from
 * nginx, one installer and a fleet; each command's work runs in-process, its
 * rows as the command line words them (the built CLI's own part is the flag
 * it refuses).
 */
import { cp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { issueServerCert } from '../../src/cert/index.js';
import { startDepotServer } from '../../src/server/index.js';
import type { InstallerSimulator } from '../../src/simulators/installer/index.js';
import { depotLine, downloadLines, statusLines } from '../../src/cli/installer-output.js';
import type { TargetSpec } from '../../src/installer/index.js';
import { runCli } from '../helpers/cli.js';
import { until } from '../helpers/poll.js';
import { tempDir } from '../helpers/temp.js';
import { NGINX, startNginx } from '../helpers/nginx.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER, asCommandLine, depotCa, startSim } from './helpers.js';
import { connectTask, downloadTask, runOnConsumers, statusTask } from './commands.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
let root: string;
let cert: { certPem: string; chainPem: string; keyPem: string };
let caPem: string;
let files: { password: string; depotPassword: string };
let release: string;
let binaryPaths: string[];

beforeAll(async () => {
  tmp = await tempDir('depotkit-last-mile-');
  root = join(tmp.dir, 'depot');
  await makeDemoDepot(root, { binarySize: 64 * 1024, signingDir: join(tmp.dir, 'signing') });
  // The catalog dates from before any sync: a re-run then finds the consumer up to date, however fast the first sync came.
  const past = new Date(Date.now() - 3600_000);
  await utimes(join(root, DEPOT_PATHS.catalog), past, past);
  const ca = await depotCa();
  caPem = ca.certPem;
  cert = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  files = {
    password: join(tmp.dir, 'admin.pass'),
    depotPassword: join(tmp.dir, 'depot.pass'),
  };
  await writeFile(files.password, `${PASSWORD}\n`, { mode: 0o600 });
  await writeFile(files.depotPassword, `${DEPOT_PASSWORD}\n`, { mode: 0o600 });
  const manifest = JSON.parse(await readFile(join(root, DEPOT_PATHS.manifest), 'utf8')) as { releases: Array<{ version: string }> };
  release = manifest.releases[0]!.version;
  const catalog = JSON.parse(await readFile(join(root, DEPOT_PATHS.catalog), 'utf8')) as {
    patches: Record<string, Array<{ artifacts: { bundles: Array<{ binaries: Array<{ fileName: string }> }> } }>>;
  };
  binaryPaths = Object.entries(catalog.patches).flatMap(([component, versions]) =>
    versions.flatMap((v) => v.artifacts.bundles.flatMap((b) => b.binaries.map((x) => `PROD/COMP/${component}/${x.fileName}`))),
  );
});
afterAll(() => tmp?.cleanup());

async function connection(sim: InstallerSimulator): Promise<TargetSpec> {
  const installerCa = join(tmp.dir, `sim-${sim.port}.pem`);
  await writeFile(installerCa, sim.caPem);
  return { installer: sim.url, user: USER, passwordFile: files.password, installerCa };
}

/** `installer connect-depot --trust-ca` with the depot's CA, its host and port and its account. */
const connectTo = (port: number) => connectTask({ hostname: 'localhost', port, username: DEPOT_USER, password: DEPOT_PASSWORD }, { caPems: [caPem] });

/** `dir` served over HTTPS with the depot's account, as `depotkit serve` serves it. */
function serve(dir: string, accessLog?: string) {
  return startDepotServer({
    root: dir,
    host: '127.0.0.1',
    port: 0,
    tls: { certPem: cert.chainPem, keyPem: cert.keyPem },
    auth: { user: DEPOT_USER, password: DEPOT_PASSWORD },
    ...(accessLog ? { accessLog: { destination: accessLog } } : {}),
  });
}

const binaryGets = async (accessLog: string) => (await readFile(accessLog, 'utf8')).split('\n').filter((l) => l.includes('"GET /PROD/COMP/')).length;

describe('depotkit installer depot and download', () => {
  it('from depotkit serve: the depot is accepted and synced, the whole release downloads, the access log shows every GET; a re-run sends nothing twice', async () => {
    const accessLog = join(tmp.dir, 'access.log');
    const server = await serve(root, accessLog);
    const sim = await startSim();
    try {
      const conn = await connection(sim);
      const depot = await runOnConsumers(conn, connectTo(server.port));
      expect(depot.ok, JSON.stringify(depot.rows)).toBe(true);
      expect(depotLine(depot.rows[0]!.result!).join('\n')).toMatch(/sync: SYNCED \(\d{4}-/);

      const download = await runOnConsumers(conn, downloadTask({ release }));
      expect(download.ok, JSON.stringify(download.rows)).toBe(true);
      const bundles = download.rows[0]!.result!.bundles;
      expect(bundles.length).toBeGreaterThanOrEqual(7);
      expect(bundles.every((b) => b.status === 'SUCCESS' && b.action === 'requested' && b.downloadedSize === b.size)).toBe(true);

      // The server writes its access log line after the answer's last byte: waited for, not assumed.
      const gets = await until(
        () => binaryGets(accessLog),
        (n) => n >= binaryPaths.length,
        'the access log to show every GET',
      );
      const log = await readFile(accessLog, 'utf8');
      for (const path of binaryPaths) expect(log).toMatch(new RegExp(`"GET /${path.replace(/[.]/g, '\\.')} HTTP/1\\.1" 200 65536`));

      const status = statusLines((await runOnConsumers(conn, statusTask())).rows[0]!.result!).join('\n');
      expect(status).toMatch(/sync: SYNCED/);
      expect(status).toMatch(new RegExp(`bundles: ${binaryPaths.length} SUCCESS`));

      // Idempotent: already synced and downloaded, nothing fetched again.
      const again = await runOnConsumers(conn, connectTo(server.port));
      expect(depotLine(again.rows[0]!.result!).join('\n')).toContain('already synced: nothing sent');
      const downloadAgain = await runOnConsumers(conn, downloadTask({ release }));
      expect(downloadAgain.ok).toBe(true);
      const againText = downloadLines(downloadAgain.rows[0]!.result!).join('\n');
      expect(againText).toContain(`${binaryPaths.length} of ${binaryPaths.length} bundles downloaded`);
      expect(againText).toContain('(already downloaded)');
      expect(await binaryGets(accessLog)).toBe(gets);

      // Bad usage: one sentence, exit 2.
      const badType = await runCli([
        'installer',
        'download',
        '--installer',
        sim.url,
        '--password-file',
        files.password,
        '--installer-ca',
        conn.installerCa!,
        '--release',
        release,
        '--image-type',
        'SIDEWAYS',
      ]);
      expect(badType.code).toBe(2);
      expect(badType.stderr).toContain('--image-type must be one of INSTALL, UPGRADE, not "SIDEWAYS".');
    } finally {
      await sim.close();
      await server.close();
    }
  });

  it('reports a failed sync with the installer message and the fix: no Compatibility data, no manifest (exit 1)', async () => {
    for (const [missing, words] of [
      [DEPOT_PATHS.compatibility, 'Vmware compatibility data download failed'],
      [DEPOT_PATHS.manifest, 'LCM_MANIFEST_NOT_FOUND'],
    ] as const) {
      const copy = join(tmp.dir, `broken-${missing.split('/').pop()}`);
      await cp(root, copy, { recursive: true });
      await rm(join(copy, missing));
      const server = await serve(copy);
      const sim = await startSim();
      try {
        const conn = await connection(sim);
        const depot = await runOnConsumers(conn, connectTo(server.port));
        expect(depot.ok).toBe(false);
        const row = depot.rows[0]!;
        expect(row.ok).toBe(false);
        expect(row.result).toMatchObject({
          ok: true,
          status: 'DEPOT_CONNECTION_SUCCESSFUL',
          sync: { ok: false, status: 'SYNC_FAILED', message: expect.stringContaining(words) },
        });
        const text = asCommandLine(depotLine(row.result!).join('\n'));
        expect(text).toMatch(new RegExp(`^depot localhost:${server.port}: DEPOT_CONNECTION_SUCCESSFUL`));
        expect(text).toMatch(new RegExp(`sync: SYNC_FAILED \\(.*\\): .*${words}`));
        expect(text).toContain(missing);
        expect(text).toContain('depotkit depot verify <depot-dir>');
        // Without the sync it stays at the accepted settings.
        expect(
          (
            await runOnConsumers(
              conn,
              connectTask(
                { hostname: 'localhost', port: server.port, username: DEPOT_USER, password: DEPOT_PASSWORD },
                { caPems: [caPem], sync: false, force: true },
              ),
            )
          ).ok,
        ).toBe(true);
      } finally {
        await sim.close();
        await server.close();
      }
    }
  });

  it('ends a bundle FAILED naming the corrupted file (exit 1), the others downloaded', async () => {
    const copy = join(tmp.dir, 'corrupt');
    await cp(root, copy, { recursive: true });
    const victim = binaryPaths[0]!;
    const bytes = await readFile(join(copy, victim));
    bytes[100] = bytes[100]! ^ 0x01;
    await writeFile(join(copy, victim), bytes);
    const server = await serve(copy);
    const sim = await startSim();
    try {
      const conn = await connection(sim);
      expect((await runOnConsumers(conn, connectTo(server.port))).ok).toBe(true);
      const download = await runOnConsumers(conn, downloadTask({ release }));
      expect(download.ok).toBe(false);
      const bundles = download.rows[0]!.result!.bundles;
      const failed = bundles.filter((b) => b.status === 'FAILED');
      expect(failed).toHaveLength(1);
      expect(failed[0]!.message).toContain(`${victim}: checksum mismatch`);
      expect(bundles.filter((b) => b.status === 'SUCCESS')).toHaveLength(bundles.length - 1);
      const one = await runOnConsumers(conn, downloadTask({ release, components: [failed[0]!.component] }));
      expect(one.ok).toBe(false);
      expect(downloadLines(one.rows[0]!.result!).join('\n')).toMatch(/^FAILED {3}\S+ .*checksum mismatch/m);
      const status = statusLines((await runOnConsumers(conn, statusTask())).rows[0]!.result!).join('\n');
      expect(status).toContain(`FAILED ${failed[0]!.component}: Failed to download bundle`);
    } finally {
      await sim.close();
      await server.close();
    }
  });

  it.skipIf(!NGINX)('from nginx, a fleet of installers syncs and downloads the release at once', async () => {
    const nginx = await startNginx({ root, certPem: cert.chainPem, keyPem: cert.keyPem, auth: { user: DEPOT_USER, password: DEPOT_PASSWORD } });
    const sims = await Promise.all([0, 1, 2].map(() => startSim()));
    try {
      const inventory = join(tmp.dir, 'fleet.yaml');
      const entries = await Promise.all(
        sims.map(async (s) => `  - url: ${s.url}\n    installerCa: ${(await connection(s)).installerCa}\n    passwordFile: ${files.password}`),
      );
      await writeFile(inventory, `installers:\n${entries.join('\n')}\n`);
      const depot = await runOnConsumers({ inventory }, connectTo(nginx.port));
      expect(depot.ok, JSON.stringify(depot.rows)).toBe(true);
      expect(depot.rows.map((r) => r.result?.sync?.status)).toEqual(['SYNCED', 'SYNCED', 'SYNCED']);

      const download = await runOnConsumers({ inventory }, downloadTask({ release }));
      expect(download.ok, JSON.stringify(download.rows)).toBe(true);
      expect(download.rows).toHaveLength(3);
      for (const row of download.rows) expect(row.result!.bundles.every((b) => b.status === 'SUCCESS')).toBe(true);
      for (const sim of sims) expect(sim.logs.filter((l) => /BundleDownloadService\] GET https:.* -> 200/.test(l))).toHaveLength(binaryPaths.length);
    } finally {
      await Promise.all(sims.map((s) => s.close()));
      await nginx.stop();
    }
  });
});
