import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import {
  BINARY_NAME_PATTERNS,
  DEPOT_PATHS,
  DEPOT_ROOT_DIR,
  TEMP_PREFIX,
  type Release,
  RELEASES,
  UMDS_PATCH_STORE_DIR,
  componentDir,
  componentsOf,
} from '../constants.js';
import { type EsxDemoResult, makeEsxDemo } from '../esx/demo.js';
import { DepotkitError, EXIT, usageError } from '../util/errors.js';
import { prepareOutputDir, writeFileAtomic, writeJsonAtomic } from '../util/fs.js';
import type { ProgressHooks } from '../util/progress.js';
import { listFiles } from '../util/walk.js';
import type { Catalog, CatalogBundle } from './catalog.js';
import { hclTimestamps } from './hcl.js';
import { type DepotLockHolder, lockFileFor, withDepotLock } from './lock.js';
import { ensureSigningKey, signCatalog } from './signature.js';
import { writeSyntheticFile } from './synthetic.js';

/** `onStart` announces the bytes about to be written, for a progress bar. */
export interface DemoOptions extends Partial<ProgressHooks> {
  release?: Release;
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
  release: Release;
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

export const DEFAULT_DEMO_BINARY_SIZE = 1 << 20;

/** Build numbers of the 9.0 GA binaries for the seven required components; the rest are derived from the name. */
const KNOWN_BUILDS: Record<string, number> = {
  ESX_HOST: 24755229,
  NSX_T_MANAGER: 24733065,
  SDDC_MANAGER_VCF: 24703748,
  VCENTER: 24755230,
  VCF_OPS_CLOUD_PROXY: 24695833,
  VRA: 24701403,
  VROPS: 24695812,
  VRSLCM: 24695816,
};

export function demoVersion(release: Release, component: string): string {
  const base = release === '9.0' ? 0 : 660000;
  const build = (KNOWN_BUILDS[component] ?? 24700000 + (createHash('sha256').update(component).digest().readUInt32BE(0) % 90000)) + base;
  return `${release}.0.0.${build}`;
}

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
  // A demo an interrupted run left half made is carried on: nothing in it is anyone else's.
  await prepareOutputDir(root, (options.force ?? false) || (await unfinishedDemo(root)));
  return withDepotLock(root, DEMO_OPERATION, async (lock) => {
    await writeFileAtomic(join(root, UNFINISHED_MARK), `${DEMO_OPERATION}\n`, { force: true });
    const result: DemoResult = await writeDemoDepot(root, release, binarySize, signingDir, now, options);
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

async function writeDemoDepot(root: string, release: Release, binarySize: number, signingDir: string, now: Date, options: DemoOptions): Promise<DemoResult> {
  const write = { force: true };
  // A run that was killed (its lock taken over, or --force) leaves temporary files only.
  for (const leftover of await listFiles(join(root, DEPOT_ROOT_DIR), { dot: true, name: (n) => n.startsWith(TEMP_PREFIX) })) {
    await rm(join(root, DEPOT_ROOT_DIR, leftover), { force: true });
  }

  const components = [...componentsOf(release)];
  const fileCount = components.reduce((sum, c) => sum + demoFileNames(c, demoVersion(release, c)).length, 0);
  options.onStart?.(fileCount * binarySize);
  const patches: Catalog['patches'] = {};
  const bom: { name: string; version: string }[] = [];
  let binaries = 0;
  for (const component of components) {
    const version = demoVersion(release, component);
    await mkdir(join(root, componentDir(component)), { recursive: true });
    const bundle: CatalogBundle = { name: `bundle-${component}-${version}`, type: 'INSTALL', binaries: [] };
    for (const fileName of demoFileNames(component, version)) {
      const checksum = await writeSyntheticFile(join(root, componentDir(component), fileName), binarySize, options.onBytes);
      bundle.binaries.push({ fileName, size: binarySize, checksum });
      binaries++;
    }
    patches[component] = [{ productVersion: version, releaseDate: now.toISOString().slice(0, 10), artifacts: { bundles: [bundle] } }];
    bom.push({ name: component, version });
  }

  const catalogText = `${JSON.stringify({ patches }, null, 2)}\n`;
  await writeFileAtomic(join(root, DEPOT_PATHS.catalog), catalogText, write);
  const key = await ensureSigningKey(signingDir);
  const signature = signCatalog(Buffer.from(catalogText), key.privateKeyPem, now);
  await writeJsonAtomic(join(root, DEPOT_PATHS.catalogSig), signature, write);

  const releaseVersion = `${release}.0.0`;
  await writeJsonAtomic(
    join(root, DEPOT_PATHS.manifest),
    {
      releases: [{ version: releaseVersion, minInstallerVersion: releaseVersion, releaseDate: now.toISOString().slice(0, 10), bom }],
      generatedBy: 'depotkit demo',
    },
    write,
  );

  const times = hclTimestamps(now);
  await writeJsonAtomic(join(root, DEPOT_PATHS.hclAll), { ...times, data: { controller: [], hdd: [], ssd: [] } }, write);
  await writeJsonAtomic(join(root, DEPOT_PATHS.hclLastUpdated), times, write);
  await writeJsonAtomic(
    join(root, DEPOT_PATHS.compatibility),
    {
      generatedBy: 'depotkit demo',
      release: releaseVersion,
      compatibilities: bom.map((b) => ({ component: b.name, version: b.version, compatibleWith: [releaseVersion] })),
    },
    write,
  );

  return {
    dir: root,
    release,
    components,
    binaries,
    totalBytes: binaries * binarySize,
    signingKey: key.keyPath,
    signingPublicKey: key.publicPath,
  };
}
