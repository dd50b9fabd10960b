import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import {
  BINARY_NAME_PATTERNS,
  DEFAULT_DEMO_BINARY_SIZE,
  DEPOT_PATHS,
  DEPOT_ROOT_DIR,
  TEMP_PREFIX,
  type Release,
  RELEASES,
  UMDS_PATCH_STORE_DIR,
  componentDir,
} from '../constants.js';
import { type EsxDemoResult, makeEsxDemo } from '../esx/demo.js';
import { DepotkitError, EXIT, usageError } from '../util/errors.js';
import { prepareOutputDir, writeFileAtomic, writeJsonAtomic } from '../util/fs.js';
import type { ProgressHooks } from '../util/progress.js';
import { listFiles } from '../util/walk.js';
import type { Catalog } from './catalog.js';
import { type DemoPlan, severalReleases, singleRelease } from './demo-releases.js';
import { hclTimestamps } from './hcl.js';
import { type DepotLockHolder, lockFileFor, withDepotLock } from './lock.js';
import { ensureSigningKey, signCatalog } from './signature.js';
import { writeSyntheticFile } from './synthetic.js';

/** `onStart` announces the bytes about to be written, for a progress bar. */
export interface DemoOptions extends Partial<ProgressHooks> {
  release?: Release;
  /**
   * Several releases instead of `release`'s one, e.g. 9.0.0.0, 9.0.1.0 (a patch of VCENTER and NSX_T_MANAGER) and
   * 9.1.0.0, each dated by its version so that two demos order alike whenever they were made.
   */
  releases?: string[];
  /** Size of every synthetic binary, in bytes. */
  binarySize?: number;
  force?: boolean;
  /** Where the catalog signing key lives; default `<dir>-signing`, outside the web root. */
  signingDir?: string;
  /** Also a small ESX depot for vSphere Lifecycle Manager under umds-patch-store/, served open. */
  esx?: boolean;
  now?: Date;
}

export interface DemoResult {
  dir: string;
  /** The line of its first release. */
  release: Release;
  /** The versions of its releases, as its manifest lists them. */
  releases: string[];
  components: string[];
  binaries: number;
  totalBytes: number;
  signingKey: string;
  signingPublicKey: string;
  /** The run that held the depot's lock and is gone: its lock was taken over. */
  tookOverLockFrom?: DepotLockHolder;
  /** The ESX depot made beside it, with `esx`. */
  esx?: EsxDemoResult;
}

/** What the depot's lock names while a demo depot is written. */
export const DEMO_OPERATION = 'depot demo';

export { DEFAULT_DEMO_BINARY_SIZE };

export { demoVersion } from './demo-releases.js';

export function demoFileNames(component: string, version: string): string[] {
  const patterns = BINARY_NAME_PATTERNS[component] ?? [`${component.toLowerCase()}-{v}.bin`];
  return patterns.map((p) => p.replace('{v}', version));
}

/** Makes a complete, self-signed depot for labs, demos, tests and benchmarks. */
export async function makeDemoDepot(dir: string, options: DemoOptions = {}): Promise<DemoResult> {
  const release = options.release ?? '9.0';
  if (!RELEASES.includes(release)) throw usageError(`Unknown release "${release}"; use one of ${RELEASES.join(', ')}.`);
  const binarySize = options.binarySize ?? DEFAULT_DEMO_BINARY_SIZE;
  if (!Number.isSafeInteger(binarySize) || binarySize < 0) throw usageError(`The size of each binary must be a whole number of bytes, not ${binarySize}.`);
  const root = resolve(dir);
  const signingDir = resolve(options.signingDir ?? join(dirname(root), `${basename(root)}-signing`));
  const now = options.now ?? new Date();
  const plan = options.releases?.length ? severalReleases(options.releases) : singleRelease(release, now);
  // A demo an interrupted run left half made is carried on: nothing in it is anyone else's.
  await prepareOutputDir(root, (options.force ?? false) || (await unfinishedDemo(root)));
  return withDepotLock(root, DEMO_OPERATION, async (lock) => {
    await writeFileAtomic(join(root, UNFINISHED_MARK), `${DEMO_OPERATION}\n`, { force: true });
    const result: DemoResult = await writeDemoDepot(root, plan, binarySize, signingDir, now, options);
    if (options.esx) result.esx = await makeEsxDemo(join(root, UMDS_PATCH_STORE_DIR), { force: true });
    await rm(join(root, UNFINISHED_MARK), { force: true });
    return lock.tookOverFrom ? { ...result, tookOverLockFrom: lock.tookOverFrom } : result;
  });
}

/** Marks a demo depot being made, until it is whole: a run interrupted before the end leaves it. */
const UNFINISHED_MARK = join('.depotkit', 'demo-unfinished');

/**
 * Whether `dir` is a demo depot that a run left half made: it carries the
 * mark, or holds nothing but the lock of a run stopped before the mark.
 */
export async function unfinishedDemo(dir: string): Promise<boolean> {
  const root = resolve(dir);
  if (
    await stat(join(root, UNFINISHED_MARK)).then(
      (s) => s.isFile(),
      () => false,
    )
  )
    return true;
  const top = await readdir(root).catch(() => [] as string[]);
  if (top.length !== 1 || top[0] !== '.depotkit') return false;
  const inner = await readdir(join(root, '.depotkit')).catch(() => [] as string[]);
  return inner.every((name) => name === 'lock');
}

/** Refuses a half-made demo to a command that reads a depot (verify, prune): its advice about a depot would not fit. */
export async function refuseUnfinishedDemo(dir: string): Promise<void> {
  if (await unfinishedDemo(dir))
    throw new DepotkitError(
      `${dir} is a demo depot that an interrupted run left half made.`,
      EXIT.problems,
      `Run it again to finish it: \`makeDemoDepot\` ${dir}`,
    );
}

/**
 * What an interrupted demo run removes before it exits, synchronously (from a
 * signal handler, while writes are under way): its temporary files and its lock.
 * The mark stays, so that the next run carries on.
 */
export function removeDemoLeftoversSync(dir: string): void {
  const root = resolve(dir);
  // The depot tree's, and the mark's own while it is written (a signal can come in between).
  for (const [folder, recursive] of [
    [DEPOT_ROOT_DIR, true],
    [UMDS_PATCH_STORE_DIR, true],
    [dirname(UNFINISHED_MARK), false],
  ] as const) {
    let names: string[] = [];
    try {
      names = readdirSync(join(root, folder), { recursive, encoding: 'utf8' });
    } catch {
      // Not made yet.
    }
    for (const name of names) if (basename(name).startsWith(TEMP_PREFIX)) rmSync(join(root, folder, name), { force: true });
  }
  try {
    if ((JSON.parse(readFileSync(lockFileFor(root), 'utf8')) as { pid?: unknown }).pid === process.pid) rmSync(lockFileFor(root), { force: true });
  } catch {
    // No lock of ours.
  }
}

async function writeDemoDepot(root: string, plan: DemoPlan, binarySize: number, signingDir: string, now: Date, options: DemoOptions): Promise<DemoResult> {
  const write = { force: true };
  // A run that was killed (its lock taken over, or --force) leaves temporary files only.
  for (const leftover of await listFiles(join(root, DEPOT_ROOT_DIR), { dot: true, name: (n) => n.startsWith(TEMP_PREFIX) })) {
    await rm(join(root, DEPOT_ROOT_DIR, leftover), { force: true });
  }

  const fileCount = plan.entries.reduce((sum, e) => sum + demoFileNames(e.component, e.productVersion).length, 0);
  options.onStart?.(fileCount * binarySize);
  const patches: Catalog['patches'] = {};
  for (const e of plan.entries) {
    await mkdir(join(root, componentDir(e.component)), { recursive: true });
    const binaries = [];
    for (const fileName of demoFileNames(e.component, e.productVersion)) {
      const checksum = await writeSyntheticFile(join(root, componentDir(e.component), fileName), binarySize, options.onBytes);
      binaries.push({ fileName, size: binarySize, checksum });
    }
    const bundles = [{ name: `bundle-${e.component}-${e.productVersion}`, type: e.type, binaries }];
    (patches[e.component] ??= []).push({ productVersion: e.productVersion, releaseDate: e.releaseDate, artifacts: { bundles } });
  }

  const catalogText = `${JSON.stringify({ patches }, null, 2)}\n`;
  await writeFileAtomic(join(root, DEPOT_PATHS.catalog), catalogText, write);
  const key = await ensureSigningKey(signingDir);
  const signature = signCatalog(Buffer.from(catalogText), key.privateKeyPem, now);
  await writeJsonAtomic(join(root, DEPOT_PATHS.catalogSig), signature, write);

  const releases = plan.releases.map((r) => ({ version: r.version, minInstallerVersion: r.version, releaseDate: r.releaseDate, bom: r.bom }));
  await writeJsonAtomic(join(root, DEPOT_PATHS.manifest), { releases, generatedBy: 'depotkit demo' }, write);

  const times = hclTimestamps(now);
  await writeJsonAtomic(join(root, DEPOT_PATHS.hclAll), { ...times, data: { controller: [], hdd: [], ssd: [] } }, write);
  await writeJsonAtomic(join(root, DEPOT_PATHS.hclLastUpdated), times, write);
  const last = plan.releases[plan.releases.length - 1]!.version;
  await writeJsonAtomic(
    join(root, DEPOT_PATHS.compatibility),
    {
      generatedBy: 'depotkit demo',
      release: last,
      compatibilities: plan.entries.map((e) => ({
        component: e.component,
        version: e.productVersion,
        compatibleWith: plan.releases.filter((r) => r.bom.some((b) => b.version === e.productVersion)).map((r) => r.version),
      })),
    },
    write,
  );

  const components = [...new Set(plan.entries.map((e) => e.component))];
  return {
    dir: root,
    release: plan.releases[0]!.version.split('.').slice(0, 2).join('.') as Release,
    releases: plan.releases.map((r) => r.version),
    components,
    binaries: fileCount,
    totalBytes: fileCount * binarySize,
    signingKey: key.keyPath,
    signingPublicKey: key.publicPath,
  };
}
