import { createReadStream, existsSync } from 'node:fs';
import { randomBytes, randomUUID } from 'node:crypto';
import { cp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS, VCENTER_UPGRADE_METADATA_DIR, componentDir } from '../../src/constants.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { startDepotServer } from '../../src/server/index.js';
import { partialPathFor } from '../../src/transfer/mirror.js';
import type { MirrorReport, UpgradeMetadataSource } from '../../src/transfer/mirror.js';
import { pruneDepot } from '../../src/transfer/prune.js';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { runCli, spawnCli } from '../helpers/cli.js';
import { useTempDir } from '../helpers/temp.js';
import { NGINX, startNginx } from '../helpers/nginx.js';
import { writeUpgradeMetadata } from '../depot/helpers.js';
import { demo, identities, nextRelease, readCatalog, sha256, treeOf } from './helpers.js';
import { mirrorIn, mirrorText } from './in-process.js';
import { catalogBinaries } from '../../src/depot/catalog.js';
import { ended } from '../helpers/ports.js';
import { until } from '../helpers/poll.js';

const USER = 'depot';
const PASSWORD = 'mirror me, not anyone else';
const BINARY = 128 * 1024;

const tmp = useTempDir('depotkit-mirror-');
let depot: string;
let caFile: string;
let passwordFile: string;
let tls: { certPem: string; keyPem: string };
let ca: Awaited<ReturnType<typeof createCa>>;
let upgradeFiles: string[];
const fresh = tmp.fresh;

beforeAll(async () => {
  depot = await demo(join(tmp.dir, 'depot'), BINARY);
  upgradeFiles = await writeUpgradeMetadata(depot, ['0b6f5c1e-2d3a-4c5b-9e8f-7a6b5c4d3e2f', 'a3c1e0d2-5b4f-4a6e-8d7c-1f2e3d4c5b6a']);
  ca = await createCa({ keySize: 2048 });
  const issued = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  tls = { certPem: issued.chainPem, keyPem: issued.keyPem };
  caFile = join(tmp.dir, 'ca.pem');
  await writeFile(caFile, ca.certPem);
  passwordFile = join(tmp.dir, 'password');
  await writeFile(passwordFile, `${PASSWORD}\n`);
});

/** The mirror as the library runs it, trusting the test CA with the depot's credentials. */
const mirror = (url: string, out: string, options: { force?: boolean } = {}) =>
  mirrorIn(url, out, { caPems: [ca.certPem], user: USER, password: PASSWORD, ...options });

/** The command line's words for the same, for its smoke tests. */
const mirrorArgs = (url: string, out: string) => ['depot', 'mirror', url, '--out', out, '--ca', caFile, '--user', USER, '--password-file', passwordFile];

interface Served {
  url: string;
  stop(): Promise<void>;
}

const SERVERS: { name: string; skip: boolean; upgradeSource: UpgradeMetadataSource; serve: (root: string, accessLog?: string) => Promise<Served> }[] = [
  {
    name: 'depotkit serve',
    skip: false,
    upgradeSource: 'status',
    serve: async (root, accessLog) => {
      const server = await startDepotServer({
        root,
        host: '127.0.0.1',
        port: 0,
        tls,
        auth: { user: USER, password: PASSWORD },
        ...(accessLog ? { accessLog: { destination: accessLog, format: 'json' } } : {}),
      });
      return { url: server.url.replace('127.0.0.1', 'localhost'), stop: () => server.close() };
    },
  },
  {
    name: 'nginx',
    skip: !NGINX,
    upgradeSource: 'listing',
    serve: async (root) => {
      const server = await startNginx({ root, ...tls, auth: { user: USER, password: PASSWORD }, listedPaths: [VCENTER_UPGRADE_METADATA_DIR] });
      return { url: server.url, stop: () => server.stop() };
    },
  },
];

describe.each(SERVERS)('depot mirror from $name', ({ serve, skip, upgradeSource }) => {
  it.skipIf(skip)('replicates the depot byte for byte over verified TLS with credentials; a re-run downloads nothing and rewrites nothing', async () => {
    const server = await serve(depot);
    try {
      const out = fresh('mirror');
      const { code, report } = await mirror(server.url, out);
      expect(code).toBe(0);
      expect(report.ok).toBe(true);
      expect(report.downloaded).toHaveLength(16);
      expect(report.metadata.missing).toEqual([]);
      // The vCenter upgrade metadata, which the catalog does not name, found as this server shows it.
      expect(report.upgradeMetadata).toEqual({ source: upgradeSource, files: upgradeFiles.length });
      expect(report.metadata.written).toEqual(expect.arrayContaining(upgradeFiles));
      expect(report.verify.ok).toBe(true);
      expect(report.releases).toEqual([expect.objectContaining({ version: '9.0.0.0', complete: true })]);
      expect(await treeOf(out)).toEqual(await treeOf(depot));

      const before = await identities(out, Object.keys(await treeOf(out)));
      const again = await mirror(server.url, out);
      expect(again.code).toBe(0);
      expect(again.report.downloaded).toEqual([]);
      expect(again.report.bytesDownloaded).toBe(0);
      expect(again.report.bytesHashedLocally).toBe(0);
      expect(again.report.alreadyInPlace).toHaveLength(16);
      expect(again.report.metadata.written).toEqual([]);
      expect(await identities(out, Object.keys(before))).toEqual(before);
    } finally {
      await server.stop();
    }
  });
});

describe('depot mirror', () => {
  it.skipIf(!NGINX)('says that the vCenter upgrade metadata is not mirrored when the server neither has a status nor lists the folder', async () => {
    const server = await startNginx({ root: depot, ...tls, auth: { user: USER, password: PASSWORD } });
    try {
      const out = fresh('unlisted');
      const res = await mirror(server.url, out);
      // The catalog's files are all there, so the mirror is complete as far as anyone can tell: exit 0, and a warning line.
      expect(res.code, res.stderr).toBe(0);
      expect(mirrorText(res.report)).toContain(`vCenter upgrade metadata (${VCENTER_UPGRADE_METADATA_DIR}/): the server lists none`);
      for (const path of upgradeFiles) expect(existsSync(join(out, path))).toBe(false);
    } finally {
      await server.stop();
    }
  });

  it('refuses a folder listing that names more upgrade metadata than a metadata archive may hold, without asking for it', async () => {
    const listing = Array.from({ length: 4000 }, () => `<a href="${randomUUID()}/">x</a>`).join('\n');
    let upgradeRequests = 0;
    const hostile: HttpsServer = createHttpsServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
      const path = decodeURIComponent(new URL(req.url!, 'https://x').pathname).slice(1);
      if (path === `${VCENTER_UPGRADE_METADATA_DIR}/`) return void res.writeHead(200, { 'content-type': 'text/html' }).end(listing);
      if (path.startsWith(`${VCENTER_UPGRADE_METADATA_DIR}/`)) upgradeRequests++;
      const file = join(depot, path);
      if (!path.startsWith('PROD/') || !existsSync(file)) return void res.writeHead(404).end();
      res.writeHead(200);
      createReadStream(file).pipe(res);
    });
    await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
    try {
      const { code, stderr } = await mirror(`https://localhost:${(hostile.address() as AddressInfo).port}`, fresh('hostile-listing'));
      expect(code).toBe(1);
      expect(stderr).toContain('names 12000 vCenter upgrade metadata files, more than the 10000 a metadata archive may hold');
      expect(upgradeRequests).toBe(0);
    } finally {
      hostile.closeAllConnections();
      await new Promise((r) => hostile.close(r));
    }
  });

  it('a mirror killed (SIGKILL) in the middle of a file resumes it with a Range request; the rest is not fetched or rewritten again', async () => {
    // The depot with its VCENTER binary 4 MiB: half of it is more than the download writes to its partial file at once.
    const big = fresh('big');
    await cp(depot, big, { recursive: true });
    // Without the vCenter upgrade metadata: the stalling server below serves files, not folder listings.
    await rm(join(big, VCENTER_UPGRADE_METADATA_DIR), { recursive: true });
    const catalog = await readCatalog(big);
    const entry = catalog.patches.VCENTER![0]!.artifacts.bundles[0]!.binaries[0]!;
    const data = randomBytes(4 * 1024 * 1024);
    await writeFile(join(big, componentDir('VCENTER'), entry.fileName), data);
    Object.assign(entry, { size: data.length, checksum: sha256(data) });
    await writeFile(join(big, DEPOT_PATHS.catalog), JSON.stringify(catalog));
    const binaries = catalogBinaries(catalog);
    const stalled = binaries.find((b) => b.component === 'VCENTER')!;
    expect(stalled.size).toBe(data.length);
    const half = 2 * 1024 * 1024;
    // A real HTTPS server that sends half of one binary and then nothing more, and every other file whole.
    let sentHalf = false;
    const stalling: HttpsServer = createHttpsServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
      const path = decodeURIComponent(new URL(req.url!, 'https://x').pathname).slice(1);
      const file = join(big, path);
      if (!path.startsWith('PROD/') || !existsSync(file)) {
        res.writeHead(404).end();
        return;
      }
      if (path === stalled.path) {
        res.writeHead(200, { 'content-length': stalled.size });
        void readFile(file).then((data) => res.write(data.subarray(0, half), () => (sentHalf = true)));
        return;
      }
      res.writeHead(200);
      createReadStream(file).pipe(res);
    });
    await new Promise<void>((r) => stalling.listen(0, '127.0.0.1', r));
    const port = (stalling.address() as AddressInfo).port;
    const out = fresh('killed');
    const partial = partialPathFor(out, stalled);
    const state = join(out, '.depotkit', 'verified.json');
    const child = spawnCli([...mirrorArgs(`https://localhost:${port}`, out), '--json'], { output: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    const remembered = async () => Object.keys(JSON.parse(await readFile(state, 'utf8').catch(() => '{}')) as object);
    const halfway = async () => {
      const held = await stat(partial).then(
        (s) => s.size,
        () => 0,
      );
      return sentHalf && held >= 1024 * 1024 && (await remembered()).length === binaries.length - 1;
    };
    await until(halfway, 'mirror halfway through its last file', { timeoutMs: 60_000, failIf: ended(child) });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    stalling.closeAllConnections();
    await new Promise((r) => stalling.close(r));
    const resumeFrom = (await stat(partial)).size;
    expect(existsSync(join(out, stalled.path))).toBe(false);
    const others = binaries.filter((b) => b !== stalled).map((b) => b.path);
    const before = await identities(out, others);

    // The same URL again, now served by depotkit serve (which answers ranges).
    const log = `${fresh('access')}.log`;
    const server = await startDepotServer({
      root: big,
      host: '127.0.0.1',
      port,
      tls,
      auth: { user: USER, password: PASSWORD },
      accessLog: { destination: log, format: 'json' },
    });
    try {
      const { code, report } = await mirror(`https://localhost:${port}`, out);
      expect(code).toBe(0);
      expect(report.downloaded).toEqual([{ path: stalled.path, size: stalled.size, resumedFrom: resumeFrom }]);
      expect(report.bytesDownloaded).toBe(stalled.size - resumeFrom);
      expect(report.alreadyInPlace).toHaveLength(binaries.length - 1);
      expect(await identities(out, others)).toEqual(before);
      expect(await treeOf(out)).toEqual(await treeOf(big));
      expect(existsSync(partial)).toBe(false);
    } finally {
      await server.close();
    }
    const requests = (await readFile(log, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { path: string; status: number; bytes: number });
    // Only the stalled binary was asked for again, as a range.
    expect(requests.filter((r) => r.path.startsWith(DEPOT_PATHS.comp.replace('PROD', '/PROD')) && !r.path.includes('Compatibility'))).toEqual([
      expect.objectContaining({ path: `/${stalled.path}`, status: 206, bytes: stalled.size - resumeFrom }),
    ]);
  });

  describe('sends credentials only to a server that passes the TLS checks', () => {
    let seen: number;
    const listen = async (server: HttpsServer | HttpServer) => {
      server.on('request', (_req, res) => {
        seen++;
        res.writeHead(500).end();
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return (server.address() as AddressInfo).port;
    };

    it('refuses a certificate from another CA and one that does not name the host; no request is ever sent', async () => {
      const otherCa = await createCa({ cn: 'someone else', keySize: 2048 });
      const impostor = await issueServerCert(otherCa, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
      // Issued by the trusted CA, but for a name only: reached by its address, it does not name the host.
      const nameOnly = await issueServerCert(ca, { dns: ['localhost'], keySize: 2048 });
      // The command line for the first (what it prints never holds the password), the library for the second.
      for (const [cert, host, expected, run] of [
        [
          impostor,
          'localhost',
          /did not pass the TLS checks \((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)/,
          (url: string, out: string) => runCli(mirrorArgs(url, out)),
        ],
        [nameOnly, '127.0.0.1', /did not pass the TLS checks \(ERR_TLS_CERT_ALTNAME_INVALID/, mirror],
      ] as const) {
        seen = 0;
        const server = createHttpsServer({ cert: cert.chainPem, key: cert.keyPem });
        const port = await listen(server);
        const out = fresh('refused');
        const url = `https://${host}:${port}`;
        const res = await run(url, out);
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
        expect(res.code).toBe(1);
        expect(res.stderr).toMatch(expected);
        expect(res.stderr).toMatch(/nothing was sent to it/);
        expect(res.stderr).not.toContain(PASSWORD);
        expect(seen).toBe(0);
        expect(existsSync(join(out, 'PROD'))).toBe(false);
      }
    });

    it('refuses to send a password over http:// without --allow-http-credentials (exit 2, no connection)', async () => {
      let connections = 0;
      const server = createHttpServer();
      server.on('connection', () => connections++);
      seen = 0;
      const port = await listen(server);
      const res = await runCli(['depot', 'mirror', `http://127.0.0.1:${port}`, '--out', fresh('plain'), '--user', USER, '--password-file', passwordFile]);
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/plain HTTP: the password of "depot" would cross the network in clear text/);
      expect(connections).toBe(0);
    });

    it('says so when the server refuses the credentials (exit 1), and writes nothing', async () => {
      const server = await startDepotServer({ root: depot, host: '127.0.0.1', port: 0, tls, auth: { user: USER, password: 'another one' } });
      try {
        const out = fresh('refused');
        const res = await mirror(server.url, out);
        expect(res.code).toBe(1);
        expect(res.stderr).toMatch(/answered 401: the depot user or password was refused/);
        expect(existsSync(join(out, 'PROD'))).toBe(false);
      } finally {
        await server.close();
      }
    });
  });

  it('a binary the server lacks is named (exit 1), the rest is placed; once it appears, a re-run fetches only it', async () => {
    const served = fresh('served');
    await cp(depot, served, { recursive: true });
    const binaries = catalogBinaries(await readCatalog(served));
    const gone = binaries.find((b) => b.component === 'VROPS')!;
    const aside = fresh('aside');
    await cp(join(served, gone.path), aside);
    await rm(join(served, gone.path));
    const server = await SERVERS[0]!.serve(served);
    try {
      const out = fresh('mirror');
      const first = await mirror(server.url, out);
      expect(first.code).toBe(1);
      expect(first.report.failed).toEqual([{ path: gone.path, size: gone.size, reason: 'the server does not have it (HTTP 404)' }]);
      expect(first.report.downloaded).toHaveLength(binaries.length - 1);
      // A first mirror lays out the metadata anyway, so that verify names what is missing.
      expect(first.report.verify.findings.filter((f) => f.severity === 'error').map((f) => [f.id, f.path])).toEqual([['binary.missing', gone.path]]);
      expect(first.report.releases[0]).toMatchObject({ complete: false, missing: [gone.path] });
      const human = mirrorText(first.report);
      expect(human).toMatch(/^Failed: 1\n\s+PROD\/COMP\/VROPS\/.*HTTP 404/m);
      expect(human).toMatch(/Release 9\.0\.0\.0 has 1 of its 16 binaries missing: the installer fails their download\./);

      // The command line once, for --json's report: the rest of the file calls the library.
      await cp(aside, join(served, gone.path));
      const second = await runCli([...mirrorArgs(server.url, out), '--json']);
      expect(second.code).toBe(0);
      expect((JSON.parse(second.stdout) as MirrorReport).downloaded.map((d) => d.path)).toEqual([gone.path]);
      expect(await treeOf(out)).toEqual(await treeOf(served));
    } finally {
      await server.stop();
    }
  });

  it('follows the served depot to its next release: new binaries only, every release named by the newest catalog, the dropped one left for prune', async () => {
    const served = fresh('served');
    await cp(depot, served, { recursive: true });
    const server = await SERVERS[0]!.serve(served);
    try {
      const out = fresh('mirror');
      expect((await mirror(server.url, out)).code).toBe(0);
      const next = await nextRelease(depot, fresh('next'), BINARY);
      await rm(served, { recursive: true });
      await cp(next.dir, served, { recursive: true });
      const { code, report } = await mirror(server.url, out);
      expect(code).toBe(0);
      expect(report.downloaded.map((d) => d.path).sort()).toEqual([...next.added].sort());
      expect(report.metadata.written).toEqual(expect.arrayContaining([DEPOT_PATHS.catalog, DEPOT_PATHS.manifest, DEPOT_PATHS.hclAll]));
      expect(report.releases.map((r) => [r.version, r.complete])).toEqual([
        ['9.0.0.0', true],
        ['9.0.1.0', true],
      ]);
      expect(report.stale).toBe(1);
      const pruned = await pruneDepot(out, { yes: true });
      expect(pruned.candidates.map((c) => c.path)).toEqual([next.dropped]);
      expect(await treeOf(out)).toEqual(await treeOf(next.dir));
    } finally {
      await server.stop();
    }
  });

  it('will not mirror over a depot that is not a mirror of the same URL without --force', async () => {
    const server = await SERVERS[0]!.serve(depot);
    try {
      const other = await demo(fresh('other'), 1024);
      const res = await mirror(server.url, other);
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/already holds a depot that is not a mirror.*\n.*--force/);
      const forced = await mirror(server.url, other, { force: true });
      expect(forced.code).toBe(0);
      expect(forced.report.downloaded).toHaveLength(16);
    } finally {
      await server.stop();
    }
  });
});
