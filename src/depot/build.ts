import { mkdir, realpath, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { limiter } from '../util/limit.js';
import { DEPOT_ROOT_DIR, TEMP_PREFIX } from '../constants.js';
import { usageError } from '../util/errors.js';
import { foldersUpTo } from '../util/fs.js';
import { listFiles } from '../util/walk.js';
import { sha256Files } from '../util/hash.js';
import { indexBinaries, layoutMetadata, sizeOf } from './build-inputs.js';
import { backupBeforeBuild, judgeBuildMetadata } from './build-guard.js';
import { type MetadataChange, metadataChangeOf } from './metadata-guard.js';
import { ensureBuildSpace } from './build-space.js';
import { type CatalogBinary, catalogBinaries } from './catalog.js';
import { type DepotLockHolder, withDepotLock } from './lock.js';
import { readMetadata } from './metadata.js';
import { Checkpoints, type PlaceMode, PLACE_MODES, VerifiedState, placeFile, stateFileFor } from './place.js';
import { type VerifyResult, verifyDepot } from './verify.js';

const PLACE_CONCURRENCY = 2;
/** What the depot's lock names while a build holds it. */
export const BUILD_OPERATION = 'depot build';

export interface BuildOptions {
  /** The vendor's metadata zip, or the folder it was extracted to. */
  metadata: string;
  /** Folders searched recursively for the binaries, by file name. */
  binaries: string[];
  out: string;
  mode?: PlaceMode;
  force?: boolean;
  /**
   * Hash linked binaries too. Copies are always hashed (while copying, at no
   * extra cost); links do not read the data, so by default only sizes are
   * checked and `depot verify --deep` checks the content.
   */
  checksumLinks?: boolean;
  /** Announces the bytes about to be copied or hashed, for a progress bar. */
  onStart?: (totalBytes: number) => void;
  onBytes?: (n: number) => void;
}

export interface BinaryEntry {
  path: string;
  component: string;
  size: number;
  source?: string;
  actualSize?: number;
  actualSha256?: string;
}

export interface BuildReport {
  out: string;
  mode: PlaceMode;
  /** Every binary is in place and `verify` finds no error. */
  ok: boolean;
  /** The run that held the depot's lock and is gone (killed, or the machine restarted): its lock was taken over. */
  tookOverLockFrom?: DepotLockHolder;
  /**
   * Everything under PROD/ in the metadata source is laid out; `ignored`: the
   * binaries the catalog names (placed from --binaries after their checksum is
   * checked) and temporary files found there.
   */
  metadata: { written: string[]; unchanged: string[]; ignored: string[] };
  placed: BinaryEntry[];
  alreadyInPlace: BinaryEntry[];
  missing: BinaryEntry[];
  wrongSize: BinaryEntry[];
  wrongChecksum: BinaryEntry[];
  /** A different file is already at the final path; --force replaces it. */
  conflicts: BinaryEntry[];
  /** Files found under --binaries that the catalog does not name (the metadata source itself excepted). */
  notInCatalog: string[];
  /** What the metadata given changed against the depot's catalog (product versions added, removed) and where the replaced metadata was kept. */
  metadataChange?: MetadataChange;
  /** Whether the content of placed links was hashed. */
  contentChecked: boolean;
  /** `depot verify`'s checks of the finished tree (without --deep: copies were hashed while placed). */
  verify: VerifyResult;
}

type Report = Omit<BuildReport, 'verify'>;

/**
 * Builds the depot tree at `out` from the vendor metadata and downloaded
 * binaries. The inputs are read and checked first; the depot's lock is taken
 * before anything is written and held to the end.
 */
export async function buildDepot(options: BuildOptions): Promise<BuildReport> {
  const mode = options.mode ?? 'copy';
  if (!PLACE_MODES.includes(mode)) throw usageError(`The placing mode must be one of ${PLACE_MODES.join(', ')}, not "${mode}".`);
  if (options.binaries.length === 0) throw usageError('Give at least one folder of binaries (`binaries`).');
  const out = resolve(options.out);
  if ((await sizeOf(out)) !== undefined) throw usageError(`${out} is a file, not a folder: a depot is built into a folder.`);

  const source = await readMetadata(options.metadata);
  const index = await indexBinaries(
    options.binaries.map((b) => resolve(b)),
    out,
  );
  // Space is judged before the lock is taken, so that a build that cannot fit writes nothing at all.
  await ensureBuildSpace(out, source.files, catalogBinaries(source.catalog), mode);
  const { change, replace } = await judgeBuildMetadata(out, source, options.force ?? false);
  return withDepotLock(out, BUILD_OPERATION, async (lock) => {
    const backup = await backupBeforeBuild(out, change);
    const built = await buildLocked(out, mode, options, source, index, replace);
    const report = change ? { ...built, metadataChange: metadataChangeOf(change, backup) } : built;
    return lock.tookOverFrom ? { ...report, tookOverLockFrom: lock.tookOverFrom } : report;
  });
}

async function buildLocked(
  out: string,
  mode: PlaceMode,
  options: BuildOptions,
  { files: metadata, ignored, catalog, origin }: Awaited<ReturnType<typeof readMetadata>>,
  index: Map<string, string[]>,
  /** Metadata in place that differs may be replaced: forced, or the catalog given is newer than the depot's. */
  replaceMetadata: boolean,
): Promise<BuildReport> {
  const binaries = catalogBinaries(catalog);
  await mkdir(out, { recursive: true });
  // An interrupted run leaves temporary files only; clear them before starting again.
  for (const leftover of await listFiles(join(out, DEPOT_ROOT_DIR), { dot: true, name: (name) => name.startsWith(TEMP_PREFIX) })) {
    await rm(join(out, DEPOT_ROOT_DIR, leftover), { force: true });
  }
  const report: Report = {
    out,
    mode,
    ok: false,
    metadata: { ...(await layoutMetadata(metadata, out, replaceMetadata)), ignored },
    placed: [],
    alreadyInPlace: [],
    missing: [],
    wrongSize: [],
    wrongChecksum: [],
    conflicts: [],
    notInCatalog: [],
    contentChecked: mode === 'copy' || (options.checksumLinks ?? false),
  };
  const state = await VerifiedState.load(stateFileFor(out));
  const checkpoints = new Checkpoints(state);
  let finished = false;
  try {
    const work = await sortOut(binaries, index, report, state, options.force ?? false);
    options.onStart?.(work.reduce((sum, w) => sum + (report.contentChecked ? w.binary.size : 0), 0));
    // Two files at a time: one is copied and hashed while the other is flushed to disk.
    const limit = limiter(PLACE_CONCURRENCY);
    let failed = false;
    const place = async (binary: CatalogBinary, candidates: string[]) => {
      if (failed) return;
      try {
        await placeBinary(binary, candidates, report, checkpoints, options);
      } catch (err) {
        failed = true;
        throw err;
      }
    };
    // After a failure nothing more starts, and what is under way ends before the lock is released.
    const results = await Promise.allSettled(work.map(({ binary, candidates }) => limit(() => place(binary, candidates))));
    const failure = results.find((r) => r.status === 'rejected');
    if (failure) throw failure.reason;
    finished = true;
  } finally {
    // What was placed and verified is kept for the next run, even when this one fails (without hiding why it failed).
    if (finished) await checkpoints.save();
    else await checkpoints.save().catch(() => undefined);
  }
  for (const list of [report.placed, report.wrongChecksum, report.wrongSize]) list.sort((a, b) => a.path.localeCompare(b.path));

  const named = new Set(binaries.map((b) => b.fileName));
  // The metadata archive (or its extracted folder) often sits among the downloads: it is not a stray.
  const fromMetadata = (file: string) => file === origin || file.startsWith(`${origin}${sep}`);
  for (const [name, paths] of index) if (!named.has(name)) report.notInCatalog.push(...paths.filter((p) => !fromMetadata(p)));
  report.notInCatalog.sort();
  // The same checks as `depot verify`, so that a tree the build calls complete also passes them.
  const verify = await verifyDepot(out);
  const binariesOk = report.missing.length + report.wrongSize.length + report.wrongChecksum.length + report.conflicts.length === 0;
  return { ...report, ok: binariesOk && verify.ok, verify };
}

/** First pass: what is already in place, what cannot be placed, and what needs work. */
async function sortOut(
  binaries: CatalogBinary[],
  index: Map<string, string[]>,
  report: Report,
  state: VerifiedState,
  force: boolean,
): Promise<{ binary: CatalogBinary; candidates: string[] }[]> {
  const work: { binary: CatalogBinary; candidates: string[] }[] = [];
  for (const binary of binaries) {
    const dest = join(report.out, binary.path);
    const entry: BinaryEntry = { path: binary.path, component: binary.component, size: binary.size };
    const destSize = await sizeOf(dest);
    const candidates = index.get(binary.fileName) ?? [];
    if (destSize !== undefined) {
      if (destSize === binary.size && (await isInPlace(dest, binary, candidates, report.mode, report.contentChecked, state))) {
        report.alreadyInPlace.push(entry);
        continue;
      }
      if (!force) {
        report.conflicts.push({ ...entry, actualSize: destSize });
        continue;
      }
    }
    if (candidates.length === 0) {
      report.missing.push(entry);
      continue;
    }
    const rightSize = [];
    for (const candidate of candidates) if ((await sizeOf(candidate)) === binary.size) rightSize.push(candidate);
    if (rightSize.length === 0) {
      report.wrongSize.push({ ...entry, source: candidates[0], actualSize: await sizeOf(candidates[0]!) });
      continue;
    }
    work.push({ binary, candidates: rightSize });
  }
  return work;
}

/** Places the first candidate whose content is right; reports the last wrong one when none is. */
async function placeBinary(binary: CatalogBinary, candidates: string[], report: Report, checkpoints: Checkpoints, options: BuildOptions): Promise<void> {
  const dest = join(report.out, binary.path);
  await mkdir(dirname(dest), { recursive: true });
  const entry: BinaryEntry = { path: binary.path, component: binary.component, size: binary.size };
  const hash = report.contentChecked;
  let last: { source: string; sha256: string; size?: number } | undefined;
  for (const candidate of candidates) {
    const source = await realpath(candidate);
    const result = await placeFile(source, dest, report.mode, { sha256: hash ? binary.checksum : undefined, size: binary.size }, options.onBytes);
    if (result.placed) {
      if (hash) await checkpoints.state.remember(dest, binary.checksum);
      // The new name and any folder made for it, up to the depot root.
      checkpoints.renamedInto(foldersUpTo(dest, report.out));
      report.placed.push({ ...entry, source });
      await checkpoints.maybeSave();
      return;
    }
    last = { source, sha256: result.actualSha256, size: result.actualSize };
  }
  // A candidate that changed size since the first pass was not read: its size is what is known.
  if (last?.size !== undefined) report.wrongSize.push({ ...entry, source: last.source, actualSize: last.size });
  else if (last) report.wrongChecksum.push({ ...entry, source: last.source, actualSha256: last.sha256 });
}

/** Is the file at `dest` already the right one? Cheap checks first, hashing last. */
async function isInPlace(
  dest: string,
  binary: CatalogBinary,
  candidates: string[],
  mode: PlaceMode,
  hashLinks: boolean,
  state: VerifiedState,
): Promise<boolean> {
  if (await state.matches(dest, binary.checksum)) return true;
  if (mode !== 'copy' && !hashLinks) {
    // A link to one of the candidates is in place without reading any data.
    const destReal = await realpath(dest).catch(() => dest);
    const destInfo = await stat(dest);
    for (const candidate of candidates) {
      const info = await stat(candidate).catch(() => undefined);
      if (info && ((info.ino === destInfo.ino && info.dev === destInfo.dev) || (await realpath(candidate)) === destReal)) return true;
    }
    return false;
  }
  const [hash] = await sha256Files([dest], { concurrency: 1 });
  if (hash?.sha256 === binary.checksum) {
    await state.remember(dest, binary.checksum);
    return true;
  }
  return false;
}
