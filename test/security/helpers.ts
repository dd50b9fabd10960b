import { spawn, spawnSync } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { expect } from 'vitest';
import yazl from 'yazl';
import { DEPOT_PATHS } from '../../src/constants.js';
import { formatBuildReport } from '../../src/cli/depot.js';
import { printLines } from '../../src/cli/output.js';
import { buildDepot, type BuildOptions } from '../../src/depot/build.js';
import { CLI, type CliResult } from '../helpers/cli.js';
import { pooledKeysEnv } from '../helpers/key-pool.js';
import { printed, shownError } from '../helpers/output.js';
import { REPO_ROOT } from '../helpers/temp.js';

/** Every file and folder under `dir` (relative), or [] when `dir` does not exist. */
export async function listTree(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true, recursive: true })).map((e) => relative(dir, join(e.parentPath, e.name))).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/**
 * What a user sees when a command refuses its input or its environment: the
 * exit code, one sentence on stderr (and at most a hint line), nothing on
 * stdout, no stack trace, and no raw control character anywhere.
 */
export function expectOneSentence(r: CliResult, code: number, message: RegExp): void {
  expect(r.code, r.stderr).toBe(code);
  expect(r.stderr).toMatch(/^depotkit: /);
  expect(r.stderr).toMatch(message);
  expect(r.stderr.trimEnd().split('\n').length).toBeLessThanOrEqual(2);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.stdout).toBe('');
  expectNoControlChars(r.stderr);
}

/** No control character but the line ends: nothing that could drive a terminal. */
export function expectNoControlChars(text: string): void {
  // eslint-disable-next-line no-control-regex
  expect(text.replace(/\n/g, '')).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
}

export interface ZipEntrySpec {
  name: string;
  data?: Buffer | string;
  /** A folder entry (the name gets a trailing slash). */
  dir?: boolean;
  compress?: boolean;
}

/** A zip made with yazl, entry by entry, exactly as given (duplicates and odd names included). */
export async function makeZip(entries: Iterable<ZipEntrySpec>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const e of entries) {
    if (e.dir) zip.addEmptyDirectory(e.name);
    else zip.addBuffer(Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data ?? ''), e.name, { compress: e.compress ?? true });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Sets the sizes an entry's central-directory record declares, as a hostile
 * archive would: the record is what a reader sees before decompressing.
 */
export function patchCentralSizes(zip: Buffer, name: string, sizes: { compressed?: number; uncompressed?: number }): Buffer {
  const out = Buffer.from(zip);
  for (let at = out.indexOf(CENTRAL_SIGNATURE); at >= 0; at = out.indexOf(CENTRAL_SIGNATURE, at + 4)) {
    const nameLength = out.readUInt16LE(at + 28);
    if (out.subarray(at + 46, at + 46 + nameLength).toString('utf8') !== name) continue;
    if (sizes.compressed !== undefined) out.writeUInt32LE(sizes.compressed, at + 20);
    if (sizes.uncompressed !== undefined) out.writeUInt32LE(sizes.uncompressed, at + 24);
    return out;
  }
  throw new Error(`no central-directory record for ${name}`);
}
const CENTRAL_SIGNATURE = Buffer.from([0x50, 0x4b, 0x01, 0x02]);

/**
 * Whether this machine lets an unprivileged process mount a small tmpfs in
 * its own user and mount namespace (`unshare -rm`): how a full disk is made
 * for real without touching the machine's disks.
 */
export const canMountTmpfs: boolean = (() => {
  const probe = spawnSync('unshare', ['-rm', 'sh', '-c', 'd=$(mktemp -d) && mount -t tmpfs -o size=4k none "$d"'], { stdio: 'ignore' });
  return probe.status === 0;
})();

/**
 * Runs the built CLI with `mountPoint` replaced by an empty tmpfs of `size`
 * (e.g. "16k") seen only by this process: a real full disk. `before` is shell
 * run first inside the namespace (e.g. to copy an existing folder in). Returns
 * what the user sees, and the listing of the tmpfs when the command ended.
 */
export function runCliOnTmpfs(mountPoint: string, size: string, args: string[], before = ''): Promise<CliResult & { tree: string[] }> {
  const quoted = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const script = [
    `mount -t tmpfs -o size=${size} none ${quoted(mountPoint)}`,
    before,
    `${quoted(process.execPath)} ${[CLI, ...args].map(quoted).join(' ')}`,
    'code=$?',
    `cd ${quoted(mountPoint)} && find . -mindepth 1 | sort >&3`,
    'exit $code',
  ]
    .filter(Boolean)
    .join('\n');
  return new Promise((resolve, reject) => {
    const child = spawn('unshare', ['-rm', 'sh', '-c', script], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...pooledKeysEnv() },
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let tree = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    (child.stdio[3] as NodeJS.ReadableStream).setEncoding('utf8').on('data', (d: string) => (tree += d));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code: code ?? -1,
        stdout,
        stderr,
        tree: tree
          .split('\n')
          .filter(Boolean)
          .map((l) => l.replace(/^\.\//, '')),
      }),
    );
  });
}

/**
 * Runs an ES module script in a fresh Node process (the built library is at
 * `dist` under REPO_ROOT); resolves with its exit code or the signal that
 * ended it. Used to crash a process in the middle of a write, for real.
 */
export function runNodeScript(source: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', source], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

export const DIST = join(REPO_ROOT, 'dist');

/**
 * `depot build` as the command runs it, in this process: exit 1 when the
 * report has errors, its report's lines, or the refusal as the user reads it.
 */
export async function depotBuild(options: BuildOptions): Promise<CliResult> {
  let report;
  try {
    report = await buildDepot(options);
  } catch (err) {
    return shownError(err);
  }
  const { stdout } = printed(() => printLines(formatBuildReport(report)));
  return { code: report.ok ? 0 : 1, stdout, stderr: '' };
}

/** Gives the first binary of the catalog at `root` (a depot or a metadata folder) the file name `name`. */
export async function renameFirstBinary(root: string, name: string): Promise<void> {
  const path = join(root, DEPOT_PATHS.catalog);
  const catalog = JSON.parse(await readFile(path, 'utf8'));
  const component = Object.keys(catalog.patches)[0]!;
  catalog.patches[component][0].artifacts.bundles[0].binaries[0].fileName = name;
  await writeFile(path, JSON.stringify(catalog, null, 2));
}
