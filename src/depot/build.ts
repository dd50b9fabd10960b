import { mkdir, readFile, realpath, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import fg from 'fast-glob';
import pLimit from 'p-limit';
import { DEPOT_ROOT_DIR, TEMP_PREFIX } from '../constants.js';
import { usageError } from '../util/errors.js';
import { isDirectory, writeFileAtomic } from '../util/fs.js';
import { sha256Files } from '../util/hash.js';
import { type CatalogBinary, catalogBinaries } from './catalog.js';
import { readMetadata } from './metadata.js';
import { type PlaceMode, PLACE_MODES, VerifiedState, placeFile, stateFileFor } from './place.js';
import { type VerifyResult, verifyDepot } from './verify.js';

const PLACE_CONCURRENCY = 2;

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
  /** Whether the content of placed links was hashed. */
  contentChecked: boolean;
  /** `depot verify`'s checks of the finished tree (without --deep: copies were hashed while placed). */
  verify: VerifyResult;
}

async function indexBinaries(folders: string[], out: string): Promise<Map<string, string[]>> {
  const index = new Map<string, string[]>();
  for (const folder of folders) {
    if (!(await isDirectory(folder))) throw usageError(`--binaries ${folder} is not a folder.`);
    const files = await fg('**/*', {
      cwd: folder,
      absolute: true,
      onlyFiles: true,
      followSymbolicLinks: true,
      dot: false,
      suppressErrors: true,
      ignore: [`**/${TEMP_PREFIX}*`],
    });
    for (const file of files) {
      // The depot being built may sit inside a downloads folder: its own files are not sources.
      if (file === out || file.startsWith(`${out}/`)) continue;
      const name = basename(file);
      index.set(name, [...(index.get(name) ?? []), file]);
    }
  }
  return index;
}

async function sizeOf(path: string): Promise<number | undefined> {
  try {
    const info = await stat(path);
    return info.isFile() ? info.size : undefined;
  } catch {
    return undefined;
  }
}

/** Lays out the metadata byte for byte, refusing to replace different files without `force`. */
async function layoutMetadata(files: Map<string, Buffer>, out: string, force: boolean): Promise<{ written: string[]; unchanged: string[] }> {
  const written: string[] = [];
  const unchanged: string[] = [];
  const conflicts: string[] = [];
  const toWrite: [string, Buffer][] = [];
  const webRoot = `${resolve(out, DEPOT_ROOT_DIR)}${sep}`;
  for (const [path, data] of files) {
    // The metadata reader keeps names under PROD/; a file must never land outside it.
    if (!resolve(out, path).startsWith(webRoot)) throw usageError(`The metadata file ${path} would leave ${webRoot}: refused.`);
    let current: Buffer | undefined;
    try {
      current = await readFile(join(out, path));
    } catch {
      current = undefined;
    }
    if (current?.equals(data)) unchanged.push(path);
    else {
      if (current && !force) conflicts.push(path);
      toWrite.push([path, data]);
    }
  }
  if (conflicts.length) {
    throw usageError(
      `${out} already holds different metadata (${conflicts.slice(0, 3).join(', ')}${conflicts.length > 3 ? `, and ${conflicts.length - 3} more` : ''}).`,
      'Use --force to replace it with the metadata given, or choose another --out.',
    );
  }
  for (const [path, data] of toWrite) {
    await writeFileAtomic(join(out, path), data, { force: true });
    written.push(path);
  }
  return { written, unchanged };
}

/** Builds the depot tree at `out` from the vendor metadata and downloaded binaries. */
export async function buildDepot(options: BuildOptions): Promise<BuildReport> {
  const mode = options.mode ?? 'copy';
  if (!PLACE_MODES.includes(mode)) throw usageError(`--mode must be one of ${PLACE_MODES.join(', ')}, not "${mode}".`);
  if (options.binaries.length === 0) throw usageError('Give at least one --binaries folder.');
  const out = resolve(options.out);
  const force = options.force ?? false;
  if ((await sizeOf(out)) !== undefined) throw usageError(`--out ${out} is a file, not a folder.`);

  const { files: metadata, ignored, catalog, origin } = await readMetadata(options.metadata);
  const binaries = catalogBinaries(catalog);
  const index = await indexBinaries(
    options.binaries.map((b) => resolve(b)),
    out,
  );

  await mkdir(out, { recursive: true });
  // An interrupted run leaves temporary files only; clear them before starting again.
  for (const leftover of await fg(`${DEPOT_ROOT_DIR}/**/${TEMP_PREFIX}*`, { cwd: out, absolute: true, dot: true, suppressErrors: true })) {
    await rm(leftover, { force: true });
  }
  const report: Omit<BuildReport, 'verify'> = {
    out,
    mode,
    ok: false,
    metadata: { ...(await layoutMetadata(metadata, out, force)), ignored },
    placed: [],
    alreadyInPlace: [],
    missing: [],
    wrongSize: [],
    wrongChecksum: [],
    conflicts: [],
    notInCatalog: [],
    contentChecked: mode === 'copy' || (options.checksumLinks ?? false),
  };
  const hashLinks = report.contentChecked;
  const state = await VerifiedState.load(stateFileFor(out));

  const placeBinary = async (binary: CatalogBinary, candidates: string[]) => {
    const dest = join(out, binary.path);
    await mkdir(dirname(dest), { recursive: true });
    const entry: BinaryEntry = { path: binary.path, component: binary.component, size: binary.size };
    const hash = mode === 'copy' || hashLinks;
    let lastMismatch: { source: string; sha256: string } | undefined;
    for (const candidate of candidates) {
      const source = await realpath(candidate);
      const result = await placeFile(source, dest, mode, hash ? binary.checksum : undefined, options.onBytes);
      if (result.placed) {
        if (hash) await state.remember(dest, binary.checksum);
        report.placed.push({ ...entry, source });
        return;
      }
      lastMismatch = { source, sha256: result.actualSha256 };
    }
    if (lastMismatch) report.wrongChecksum.push({ ...entry, source: lastMismatch.source, actualSha256: lastMismatch.sha256 });
  };

  // First pass: what is already in place, and what needs work.
  const work: { binary: CatalogBinary; candidates: string[] }[] = [];
  for (const binary of binaries) {
    const dest = join(out, binary.path);
    const entry: BinaryEntry = { path: binary.path, component: binary.component, size: binary.size };
    const destSize = await sizeOf(dest);
    const candidates = index.get(binary.fileName) ?? [];
    if (destSize !== undefined) {
      if (destSize === binary.size && (await isInPlace(dest, binary, candidates, mode, hashLinks, state))) {
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

  options.onStart?.(work.reduce((sum, w) => sum + (mode === 'copy' || hashLinks ? w.binary.size : 0), 0));
  // Two files at a time: one is copied and hashed while the other is flushed to disk.
  const limit = pLimit(PLACE_CONCURRENCY);
  await Promise.all(work.map(({ binary, candidates }) => limit(() => placeBinary(binary, candidates))));
  for (const list of [report.placed, report.wrongChecksum]) list.sort((a, b) => a.path.localeCompare(b.path));
  await state.save();

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
