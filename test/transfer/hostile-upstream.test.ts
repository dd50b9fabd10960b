import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, link, lstat, mkdir, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS, TEMP_PREFIX } from '../../src/constants.js';
import { type CatalogBinary, catalogBinaries } from '../../src/depot/catalog.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { partialPathFor } from '../../src/transfer/mirror.js';
import type { MirrorReport } from '../../src/transfer/mirror.js';
import { formatSeal, sealCode } from '../../src/transfer/seal.js';
import { CLI, runCli, spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { manyTinyBinaries } from './generated.js';
import { demo, readCatalog, sha256 } from './helpers.js';
import { type Outcome, mirrorIn, mirrorText } from './in-process.js';
import { sendFile, sendForever, startUpstream } from './upstream.js';
import { until } from '../helpers/poll.js';
import { ended } from '../helpers/ports.js';

const BINARY = 128 * 1024;
const MEASURE = pathToFileURL(join(import.meta.dirname, 'exit-measure.mjs')).href;
/** Far above what a mirror holds (about 100 MiB here), far below what holding a hostile body would take. */
const PEAK_MIB_BOUND = 224;

let base: string;
let cleanup: () => Promise<void>;
let depot: string;
let binaries: CatalogBinary[];
let caFile: string;
let caPem: string;
let tls: { certPem: string; keyPem: string };
let n = 0;
const fresh = (name: string) => join(base, `${name}-${n++}`);
const binaryOf = (component: string) => binaries.find((b) => b.component === component)!;

beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir('depotkit-hostile-'));
  depot = await demo(join(base, 'depot'), BINARY);
  binaries = catalogBinaries(await readCatalog(depot));
  const ca = await createCa({ keySize: 2048 });
  const issued = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  tls = { certPem: issued.chainPem, keyPem: issued.keyPem };
  caFile = join(base, 'ca.pem');
  await writeFile(caFile, ca.certPem);
  caPem = ca.certPem;
});
afterAll(() => cleanup());

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  report: MirrorReport;
  peakMiB: number;
  writtenMiB: number;
}

/** depot mirror as a user runs it, its peak memory and the bytes it wrote measured as it exits: for what only a process of its own shows. */
async function measured(url: string, out: string): Promise<Run> {
  const measure = join(base, `measure-${n++}.json`);
  const args = ['--import', MEASURE, CLI, 'depot', 'mirror', url, '--out', out, '--ca', caFile, '--json'];
  const child = spawn(process.execPath, args, { env: { ...process.env, EXIT_MEASURE_FILE: measure }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await new Promise<number>((r) => child.on('close', (c) => r(c ?? -1)));
  const measured = JSON.parse(await readFile(measure, 'utf8')) as { peakKiB: number; writtenBytes: number };
  const report = stdout ? (JSON.parse(stdout) as MirrorReport) : (undefined as unknown as MirrorReport);
  return { code, stdout, stderr, report, peakMiB: measured.peakKiB / 1024, writtenMiB: measured.writtenBytes / 1024 ** 2 };
}

/** The mirror in this process, trusting the test CA; a timeout in seconds as --timeout takes it. */
function mirror(url: string, out: string, options: { timeout?: number; expectSeal?: string } = {}): Promise<Outcome<MirrorReport>> {
  return mirrorIn(url, out, {
    caPems: [caPem],
    ...(options.timeout ? { timeoutMs: options.timeout * 1000 } : {}),
    ...(options.expectSeal ? { expectSeal: options.expectSeal } : {}),
  });
}

/** Every temporary file under `root`. */
async function tempsUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.name.startsWith(TEMP_PREFIX)).map((e) => join(e.parentPath, e.name));
}

describe('depot mirror from a hostile upstream', () => {
  it('never writes through a link or a hard link planted at a partial name, nor into a component folder that is a link', async () => {
    const server = await startUpstream(tls, () => false, depot);
    try {
      const out = fresh('planted');
      expect((await mirror(server.url, out)).code).toBe(0);
      const [vcenter, nsx, vro] = [binaryOf('VCENTER'), binaryOf('NSX_T_MANAGER'), binaryOf('VRO')];
      await rm(join(out, vcenter.path));
      await rm(join(out, nsx.path));
      // What a local writer wants overwritten: a file the mirror (running as root) can write, and a folder.
      const linked = join(base, 'shadow');
      const hardLinked = join(base, 'sudoers');
      const elsewhere = join(base, 'elsewhere');
      await writeFile(linked, 'root:secret\n', { mode: 0o600 });
      await writeFile(hardLinked, 'ALL ALL=(ALL) NOPASSWD: ALL\n', { mode: 0o600 });
      await mkdir(elsewhere);
      await symlink(linked, partialPathFor(out, vcenter));
      await link(hardLinked, partialPathFor(out, nsx));
      await rm(join(out, 'PROD/COMP/VRO'), { recursive: true });
      await symlink(elsewhere, join(out, 'PROD/COMP/VRO'));

      const { code, report } = await mirror(server.url, out);
      expect(code).toBe(1);
      expect(report.replacedPartials).toEqual([
        { path: nsx.path, found: 'a file with 2 names (a hard link)' },
        { path: vcenter.path, found: 'a link' },
      ]);
      expect(report.downloaded.map((d) => d.path)).toEqual([nsx.path, vcenter.path]);
      expect(report.failed).toEqual([
        { path: vro.path, size: vro.size, reason: expect.stringMatching(/^PROD\/COMP\/VRO is a link, not a folder of the depot/) },
      ]);
      // The files outside are as they were, bytes and mode; nothing went into the other folder.
      expect(await readFile(linked, 'utf8')).toBe('root:secret\n');
      expect(await readFile(hardLinked, 'utf8')).toBe('ALL ALL=(ALL) NOPASSWD: ALL\n');
      expect(((await stat(linked)).mode & 0o777).toString(8)).toBe('600');
      expect(((await stat(hardLinked)).mode & 0o777).toString(8)).toBe('600');
      expect((await stat(hardLinked)).nlink).toBe(1);
      expect(await readdir(elsewhere)).toEqual([]);
      // And the depot holds regular files of its own in their place.
      for (const b of [vcenter, nsx]) {
        const placed = await lstat(join(out, b.path));
        expect(placed.isFile() && placed.nlink === 1 && (placed.mode & 0o777) === 0o644).toBe(true);
        expect(sha256(await readFile(join(out, b.path)))).toBe(b.checksum);
      }
    } finally {
      await server.close();
    }
  });

  it('cuts an endless catalog at its bound and ends with one sentence, before writing anything; memory stays low', async () => {
    const server = await startUpstream(tls, (path, _req, res) => (path === DEPOT_PATHS.catalog ? sendForever(res) : false), depot);
    try {
      const out = fresh('endless-catalog');
      const run = await measured(server.url, out);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/productVersionCatalog\.json is larger than 64\.0 MiB \(more than 64\.0 MiB sent\): not depot metadata/);
      expect(run.peakMiB).toBeLessThan(PEAK_MIB_BOUND);
      expect(existsSync(out)).toBe(false);
    } finally {
      await server.close();
    }
  });

  it('streams an endless metadata file to disk up to its bound, then ends with one sentence; nothing is left behind and memory stays low', async () => {
    const server = await startUpstream(tls, (path, _req, res) => (path === DEPOT_PATHS.hclAll ? sendForever(res) : false), depot);
    try {
      const out = fresh('endless-hcl');
      const run = await measured(server.url, out);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/PROD\/vsan\/hcl\/all\.json is larger than 256\.0 MiB \(more than 256\.0 MiB sent\): not depot metadata/);
      expect(run.peakMiB).toBeLessThan(PEAK_MIB_BOUND);
      expect(await tempsUnder(out)).toEqual([]);
      expect(existsSync(join(out, DEPOT_PATHS.catalog))).toBe(false);
    } finally {
      await server.close();
    }
  });

  it('gives up a binary that drips a byte at a time once the timeout passes without the slowest speed, without retrying it; the others come through', async () => {
    const dripped = binaryOf('VCENTER');
    let sent = 0;
    const server = await startUpstream(
      tls,
      (path, _req, res) => {
        if (path !== dripped.path) return false;
        res.writeHead(200, { 'content-length': dripped.size });
        const drip = setInterval(() => res.write(Buffer.from([0x42]), () => sent++), 500);
        res.on('close', () => clearInterval(drip));
      },
      depot,
    );
    try {
      const { code, report } = await mirror(server.url, fresh('drip'), { timeout: 2 });
      expect(code).toBe(1);
      expect(report.failed).toEqual([
        {
          path: dripped.path,
          size: dripped.size,
          reason: expect.stringMatching(/^the download stopped at \d+ of 131072 bytes after 1 attempt: \d+ B arrived in the last 2 s, less than the 2\.0 KiB/),
        },
      ]);
      expect(report.downloaded).toHaveLength(binaries.length - 1);
      // One request, a handful of bytes: cut within about the timeout, where the idle timeout alone waits for ever.
      expect(server.requests.filter((p) => p === dripped.path)).toHaveLength(1);
      expect(sent).toBeLessThan(40);
    } finally {
      await server.close();
    }
  });

  it('ends the run with one sentence when the catalog drips', async () => {
    const server = await startUpstream(tls, (path, _req, res) => {
      if (path !== DEPOT_PATHS.catalog) return false;
      res.writeHead(200);
      const drip = setInterval(() => res.write('{'), 500);
      res.on('close', () => clearInterval(drip));
    });
    try {
      const out = fresh('drip-catalog');
      const run = await mirror(server.url, out, { timeout: 2 });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/productVersionCatalog\.json could not be read: \d+ B arrived in the last 2 s, less than the 2\.0 KiB/);
      expect(existsSync(out)).toBe(false);
    } finally {
      await server.close();
    }
  });

  it('mirrors a binary whose name leaves no room for the partial prefix through a shortened partial name; a name no file system holds fails that binary alone', async () => {
    const served = fresh('long-names');
    await cp(depot, served, { recursive: true });
    const catalog = await readCatalog(served);
    const bundle = catalog.patches.VCENTER![0]!.artifacts.bundles[0]!;
    // 224 bytes of UTF-8: the partial name (its prefix and the name) would be 263, past NAME_MAX.
    const long = `${'é'.repeat(110)}.iso`;
    const data = randomBytes(1000);
    await writeFile(join(served, 'PROD/COMP/VCENTER', long), data);
    bundle.binaries.push({ fileName: long, size: data.length, checksum: sha256(data) });
    await writeFile(join(served, DEPOT_PATHS.catalog), JSON.stringify(catalog));
    const server = await startUpstream(tls, () => false, served);
    try {
      const out = fresh('long-names-out');
      const { code, report, stderr } = await mirror(server.url, out);
      expect(code, `${stderr}${JSON.stringify([report?.failed, report?.verify?.findings?.filter((f) => f.severity === 'error')])}`).toBe(0);
      expect(report.downloaded.map((d) => d.path)).toContain(`PROD/COMP/VCENTER/${long}`);
      expect(await readFile(join(out, 'PROD/COMP/VCENTER', long))).toEqual(data);
      const partial = basename(partialPathFor(out, { path: `PROD/COMP/VCENTER/${long}`, checksum: sha256(data), fileName: long }));
      expect(Buffer.byteLength(partial)).toBeLessThanOrEqual(255);
      expect(partial.startsWith(`${TEMP_PREFIX}partial-${sha256(data).slice(0, 16)}-éé`)).toBe(true);

      // A name of 300 bytes cannot be a file: that binary alone fails (exit 1), every other one is mirrored.
      const tooLong = `${'x'.repeat(296)}.iso`;
      bundle.binaries.push({ fileName: tooLong, size: 10, checksum: sha256('0123456789') });
      await writeFile(join(served, DEPOT_PATHS.catalog), JSON.stringify(catalog));
      const refusedOut = fresh('too-long-out');
      const refused = await mirror(server.url, refusedOut);
      expect(refused.code).toBe(1);
      expect(refused.report.failed).toEqual([
        { path: `PROD/COMP/VCENTER/${tooLong}`, size: 10, reason: 'its file name is longer than 255 bytes: no file system takes it' },
      ]);
      expect(await readFile(join(refusedOut, 'PROD/COMP/VCENTER', long))).toEqual(data);
      expect(refused.report.downloaded.length).toBe(report.downloaded.length);
    } finally {
      await server.close();
    }
  });

  it('over a catalog of 400 tiny binaries, saves its state in batches (its writes stay in proportion to the depot) and memory stays low', async () => {
    const generated = manyTinyBinaries(400);
    const server = await startUpstream(tls, (path, _req, res) => {
      if (path === DEPOT_PATHS.catalog) return void res.writeHead(200, { 'content-length': generated.catalog.length }).end(generated.catalog);
      const body = generated.body(path);
      if (body) return void res.writeHead(200, { 'content-length': body.length }).end(body);
      void sendFile(join(depot, path), res);
    });
    try {
      const run = await measured(server.url, fresh('tiny'));
      // Depot verify's checks fail (the catalog names VCENTER alone); every binary came through.
      expect(run.code).toBe(1);
      expect(run.report.failed).toEqual([]);
      expect(run.report.downloaded).toHaveLength(400);
      // The verified state (about 0.12 MB at the end) written whole once per file would make 24 MB; in batches, under 1 MB.
      expect(run.writtenMiB).toBeLessThan(8);
      expect(run.peakMiB).toBeLessThan(PEAK_MIB_BOUND);
    } finally {
      await server.close();
    }
    // Each file is flushed to disk before it is renamed: a slow disk takes its time.
  }, 180_000);
});

describe('depot mirror: one writer per depot, and a seal carried apart', () => {
  it('refuses a second mirror into the same depot, naming the first; the lock of a mirror killed meanwhile is taken over and said', async () => {
    const stalled = binaryOf('VCENTER');
    let stall = true;
    const server = await startUpstream(
      tls,
      (path, _req, res) => {
        if (path !== stalled.path || !stall) return false;
        res.writeHead(200, { 'content-length': stalled.size });
        void readFile(join(depot, path)).then((data) => res.write(data.subarray(0, stalled.size / 2)));
      },
      depot,
    );
    const out = fresh('locked');
    try {
      const first = spawnCli(['depot', 'mirror', server.url, '--out', out, '--ca', caFile, '--json'], { output: 'ignore' });
      const exited = new Promise((r) => first.on('exit', r));
      // The partial file exists once its download has started, with the lock held.
      const partial = partialPathFor(out, stalled);
      await until(() => existsSync(partial), 'the first mirror to start its download', { timeoutMs: 60_000, failIf: ended(first) });
      const second = await mirror(server.url, out);
      expect(second.code).toBe(2);
      expect(second.stderr).toMatch(new RegExp(`${out} is being written by another run: depot mirror \\(process ${first.pid} on `));

      first.kill('SIGKILL');
      await exited;
      stall = false;
      const third = await mirror(server.url, out);
      expect(third.code, third.stderr).toBe(0);
      expect(mirrorText(third.report)).toMatch(
        new RegExp(`^The depot's lock was left by depot mirror \\(process ${first.pid} on .*\\), which is gone: taken over\\.$`, 'm'),
      );
      const fourth = await mirror(server.url, out);
      expect(fourth.report.lock).toEqual({});
      expect(fourth.report.alreadyInPlace).toHaveLength(binaries.length);
    } finally {
      await server.close();
    }
  });

  it('holds the source to the seal given, before writing anything; without one, says that the source vouched for itself and prints its seal', async () => {
    const server = await startUpstream(tls, () => false, depot);
    try {
      const catalogSha256 = sha256(await readFile(join(depot, DEPOT_PATHS.catalog)));
      const seal = formatSeal({ catalogSha256 });
      const other = sealCode(createHash('sha256').update('another catalog').digest('hex'));

      const refused = fresh('sealed-wrong');
      const wrong = await mirror(server.url, refused, { expectSeal: `catalog ${other}` });
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain(
        `is not the one the seal vouches for: its code is ${sealCode(catalogSha256)}, the seal's is ${other}; nothing was written.`,
      );
      expect(existsSync(refused)).toBe(false);

      // As a person reads it out: lower case, without dashes.
      // On the command line, once: --expect.
      const code = sealCode(catalogSha256).replaceAll('-', '').toLowerCase();
      const held = await runCli(['depot', 'mirror', server.url, '--out', fresh('sealed'), '--ca', caFile, '--expect', code, '--json']);
      expect(held.code).toBe(0);
      expect(JSON.parse(held.stdout)).toMatchObject({ vouchedBy: 'seal', seal });

      const unsealed = await mirror(server.url, fresh('unsealed'));
      expect(unsealed.code).toBe(0);
      expect(mirrorText(unsealed.report).split('\n').at(-1)).toBe(
        `Seal of the source: ${seal}. Only the source vouched for its catalog: compare this seal with the one written down at the other site (or give it with --expect).`,
      );
    } finally {
      await server.close();
    }
  });
});
