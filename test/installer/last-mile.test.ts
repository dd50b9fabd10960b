/**
 * The last mile through the built CLI: the installer accepts the depot, syncs
 * its metadata and downloads every bundle of a release from it, from
 * `depotkit serve` and from nginx, one installer and a fleet.
 */
import { cp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { issueServerCert } from '../../src/cert/index.js';
import { startDepotServer } from '../../src/server/index.js';
import type { InstallerSimulator } from '../../src/simulators/installer/index.js';
import { runCli, spawnCliJson } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { NGINX, startNginx } from '../helpers/nginx.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER, depotCa, startSim } from './helpers.js';

interface Row<T> {
  name: string;
  ok: boolean;
  result: T;
}
interface DepotResult {
  ok: boolean;
  status: string;
  sync?: { ok: boolean; status: string; message?: string; fix?: string; action: string };
}
interface DownloadResult {
  ok: boolean;
  release: string;
  bundles: Array<{ id: string; component: string; status: string; action: string; message?: string; size: number; downloadedSize: number }>;
}

let tmp: { dir: string; cleanup: () => Promise<void> };
let root: string;
let cert: { certPem: string; chainPem: string; keyPem: string };
let files: { password: string; depotPassword: string; ca: string; cert: string; key: string };
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
  cert = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  files = {
    password: join(tmp.dir, 'admin.pass'),
    depotPassword: join(tmp.dir, 'depot.pass'),
    ca: join(tmp.dir, 'ca.pem'),
    cert: join(tmp.dir, 'chain.pem'),
    key: join(tmp.dir, 'key.pem'),
  };
  await writeFile(files.password, `${PASSWORD}\n`, { mode: 0o600 });
  await writeFile(files.depotPassword, `${DEPOT_PASSWORD}\n`, { mode: 0o600 });
  await writeFile(files.ca, ca.certPem);
  await writeFile(files.cert, cert.chainPem);
  await writeFile(files.key, cert.keyPem, { mode: 0o600 });
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

async function simCa(sim: InstallerSimulator): Promise<string> {
  const path = join(tmp.dir, `sim-${sim.port}.pem`);
  await writeFile(path, sim.caPem);
  return path;
}

async function connection(sim: InstallerSimulator): Promise<string[]> {
  return ['--installer', sim.url, '--user', USER, '--password-file', files.password, '--installer-ca', await simCa(sim)];
}

const depotArgs = (port: number) => [
  '--trust-ca',
  files.ca,
  '--depot-host',
  'localhost',
  '--depot-port',
  String(port),
  '--depot-user',
  DEPOT_USER,
  '--depot-password-file',
  files.depotPassword,
];

describe('depotkit installer depot and download', () => {
  it('from depotkit serve: the depot is accepted and synced, the whole release downloads, the access log shows every GET; a re-run sends nothing twice', async () => {
    const accessLog = join(tmp.dir, 'access.log');
    const serve = await spawnCliJson<{ url: string; port: number }>([
      'serve',
      root,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--workers',
      '1',
      '--cert',
      files.cert,
      '--key',
      files.key,
      '--user',
      DEPOT_USER,
      '--password-file',
      files.depotPassword,
      '--access-log',
      accessLog,
      '--json',
    ]);
    const sim = await startSim();
    try {
      const conn = await connection(sim);
      const depot = await runCli(['installer', 'depot', ...conn, ...depotArgs(serve.info.port)]);
      expect(depot.code, depot.stdout + depot.stderr).toBe(0);
      expect(depot.stdout).toMatch(/sync: SYNCED \(\d{4}-/);

      const download = await runCli(['installer', 'download', ...conn, '--release', release, '--json']);
      expect(download.code, download.stdout + download.stderr).toBe(0);
      const row = (JSON.parse(download.stdout) as { installers: Array<Row<DownloadResult>> }).installers[0]!;
      expect(row.result.bundles.length).toBeGreaterThanOrEqual(7);
      expect(row.result.bundles.every((b) => b.status === 'SUCCESS' && b.action === 'requested' && b.downloadedSize === b.size)).toBe(true);

      const log = await readFile(accessLog, 'utf8');
      for (const path of binaryPaths) expect(log).toMatch(new RegExp(`"GET /${path.replace(/[.]/g, '\\.')} HTTP/1\\.1" 200 65536`));
      const gets = log.split('\n').filter((l) => l.includes('"GET /PROD/COMP/')).length;

      const status = await runCli(['installer', 'status', ...conn]);
      expect(status.stdout).toMatch(/sync: SYNCED/);
      expect(status.stdout).toMatch(new RegExp(`bundles: ${binaryPaths.length} SUCCESS`));

      // Idempotent: already synced and downloaded, nothing fetched again.
      const again = await runCli(['installer', 'depot', ...conn, ...depotArgs(serve.info.port)]);
      expect(again.stdout).toContain('already synced: nothing sent');
      const downloadAgain = await runCli(['installer', 'download', ...conn, '--release', release]);
      expect(downloadAgain.code).toBe(0);
      expect(downloadAgain.stdout).toContain(`${binaryPaths.length} of ${binaryPaths.length} bundles downloaded`);
      expect(downloadAgain.stdout).toContain('(already downloaded)');
      expect((await readFile(accessLog, 'utf8')).split('\n').filter((l) => l.includes('"GET /PROD/COMP/')).length).toBe(gets);

      // Bad usage: one sentence, exit 2.
      const badType = await runCli(['installer', 'download', ...conn, '--release', release, '--image-type', 'SIDEWAYS']);
      expect(badType.code).toBe(2);
      expect(badType.stderr).toContain('--image-type must be one of INSTALL, UPGRADE, not "SIDEWAYS".');
    } finally {
      await sim.close();
      serve.child.kill('SIGTERM');
      await serve.exited;
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
      const server = await startDepotServer({
        root: copy,
        host: '127.0.0.1',
        port: 0,
        tls: { certPem: cert.chainPem, keyPem: cert.keyPem },
        auth: { user: DEPOT_USER, password: DEPOT_PASSWORD },
      });
      const sim = await startSim();
      try {
        const conn = await connection(sim);
        const depot = await runCli(['installer', 'depot', ...conn, ...depotArgs(server.port)]);
        expect(depot.code).toBe(1);
        expect(depot.stdout).toContain(`FAILED  depot localhost:${server.port}: DEPOT_CONNECTION_SUCCESSFUL`);
        expect(depot.stdout).toMatch(new RegExp(`sync: SYNC_FAILED \\(.*\\): .*${words}`));
        expect(depot.stdout).toContain(missing);
        expect(depot.stdout).toContain('depotkit depot verify <depot-dir>');
        const json = await runCli(['installer', 'depot', ...conn, ...depotArgs(server.port), '--json']);
        const row = (JSON.parse(json.stdout) as { installers: Array<Row<DepotResult>> }).installers[0]!;
        expect(row.ok).toBe(false);
        expect(row.result).toMatchObject({
          ok: true,
          status: 'DEPOT_CONNECTION_SUCCESSFUL',
          sync: { ok: false, status: 'SYNC_FAILED', message: expect.stringContaining(words) },
        });
        // --no-sync leaves it at the accepted settings.
        expect((await runCli(['installer', 'depot', ...conn, ...depotArgs(server.port), '--no-sync', '--force'])).code).toBe(0);
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
    const server = await startDepotServer({
      root: copy,
      host: '127.0.0.1',
      port: 0,
      tls: { certPem: cert.chainPem, keyPem: cert.keyPem },
      auth: { user: DEPOT_USER, password: DEPOT_PASSWORD },
    });
    const sim = await startSim();
    try {
      const conn = await connection(sim);
      expect((await runCli(['installer', 'depot', ...conn, ...depotArgs(server.port)])).code).toBe(0);
      const download = await runCli(['installer', 'download', ...conn, '--release', release, '--json']);
      expect(download.code).toBe(1);
      const bundles = (JSON.parse(download.stdout) as { installers: Array<Row<DownloadResult>> }).installers[0]!.result.bundles;
      const failed = bundles.filter((b) => b.status === 'FAILED');
      expect(failed).toHaveLength(1);
      expect(failed[0]!.message).toContain(`${victim}: checksum mismatch`);
      expect(bundles.filter((b) => b.status === 'SUCCESS')).toHaveLength(bundles.length - 1);
      const text = await runCli(['installer', 'download', ...conn, '--release', release, '--component', failed[0]!.component]);
      expect(text.code).toBe(1);
      expect(text.stdout).toMatch(/^ {4}FAILED {3}\S+ .*checksum mismatch/m);
      const status = await runCli(['installer', 'status', ...conn]);
      expect(status.stdout).toContain(`FAILED ${failed[0]!.component}: Failed to download bundle`);
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
      const entries = await Promise.all(sims.map(async (s) => `  - url: ${s.url}\n    installerCa: ${await simCa(s)}\n    passwordFile: ${files.password}`));
      await writeFile(inventory, `installers:\n${entries.join('\n')}\n`);
      const depot = await runCli(['installer', 'depot', '--inventory', inventory, ...depotArgs(nginx.port), '--json']);
      expect(depot.code, depot.stdout + depot.stderr).toBe(0);
      const depotRows = (JSON.parse(depot.stdout) as { installers: Array<Row<DepotResult>> }).installers;
      expect(depotRows.map((r) => r.result.sync?.status)).toEqual(['SYNCED', 'SYNCED', 'SYNCED']);

      const download = await runCli(['installer', 'download', '--inventory', inventory, '--release', release, '--json']);
      expect(download.code, download.stdout + download.stderr).toBe(0);
      const rows = (JSON.parse(download.stdout) as { installers: Array<Row<DownloadResult>> }).installers;
      expect(rows).toHaveLength(3);
      for (const row of rows) expect(row.result.bundles.every((b) => b.status === 'SUCCESS')).toBe(true);
      for (const sim of sims) expect(sim.logs.filter((l) => /BundleDownloadService\] GET https:.* -> 200/.test(l))).toHaveLength(binaryPaths.length);
    } finally {
      await Promise.all(sims.map((s) => s.close()));
      await nginx.stop();
    }
  });
});
