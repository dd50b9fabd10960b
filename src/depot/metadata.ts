import { readFile, stat } from 'node:fs/promises';
import { basename, join, posix, resolve } from 'node:path';
import { DEPOT_PATHS, DEPOT_ROOT_DIR, TEMP_PREFIX } from '../constants.js';
import { DepotkitError, describeFsError, usageError } from '../util/errors.js';
import { isDirectory } from '../util/fs.js';
import { listFiles } from '../util/walk.js';
import { METADATA_LIMITS } from '../util/limits.js';
import { openZipFile, readEntryData, walkZip } from '../util/zip.js';
import { escapeControlChars, formatBytes, hasControlChars } from '../util/text.js';
import { type Catalog, catalogBinaries, parseCatalog } from './catalog.js';

/** Metadata files by web-root-relative path (`PROD/...`), exactly as shipped. */
export type MetadataFiles = Map<string, Buffer>;

/**
 * Whether a file of the metadata source is laid out: everything under PROD/
 * is (the vendor's archive also carries vCenter upgrade metadata under
 * PROD/COMP/VCENTER/), except the binaries the catalog names, which are placed
 * only after their checksum is checked, and the toolkit's own temporary files.
 */
export function isMetadataPath(path: string, catalogBinaryPaths: ReadonlySet<string>): boolean {
  return path.startsWith(`${DEPOT_ROOT_DIR}/`) && !basename(path).startsWith(TEMP_PREFIX) && !catalogBinaryPaths.has(path);
}

/**
 * The archive keeps a copy of the HCL and Compatibility data under
 * PROD/metadata/; when only that copy is there, it is also laid out where the
 * installer reads it.
 */
function addServedCopies(files: MetadataFiles): void {
  const compatibilityName = basename(DEPOT_PATHS.compatibility);
  const copies: [string, string[]][] = [
    [DEPOT_PATHS.hclAll, [`${DEPOT_PATHS.metadataHclDir}/${basename(DEPOT_PATHS.hclAll)}`]],
    [DEPOT_PATHS.hclLastUpdated, [`${DEPOT_PATHS.metadataHclDir}/${basename(DEPOT_PATHS.hclLastUpdated)}`]],
    [DEPOT_PATHS.compatibility, DEPOT_PATHS.metadataCompatibilityDirs.map((d) => `${d}/${compatibilityName}`)],
  ];
  for (const [served, sources] of copies) {
    const source = sources.find((s) => files.has(s));
    if (!files.has(served) && source) files.set(served, files.get(source)!);
  }
}

export interface MetadataSource {
  /** What is laid out, by web-root-relative path. */
  files: MetadataFiles;
  /** Files under PROD/ that are not laid out: binaries the catalog names, temporary files. */
  ignored: string[];
  catalog: Catalog;
  /** The zip or folder given: files there are not downloads of binaries. */
  origin: string;
}

export async function readMetadata(source: string): Promise<MetadataSource> {
  const path = resolve(source);
  const all = (await isDirectory(path)) ? await readMetadataDir(path) : await readMetadataZip(path);
  const catalogBytes = all.get(DEPOT_PATHS.catalog);
  if (!catalogBytes) {
    throw usageError(
      `${source} has no ${DEPOT_PATHS.catalog}: it is not the vendor's depot metadata.`,
      'Pass the vcf-<version>-offline-depot-metadata.zip archive or the folder it was extracted to.',
    );
  }
  const catalog = parseCatalog(catalogBytes.toString('utf8'), `${source}: ${DEPOT_PATHS.catalog}`);
  const binaryPaths = new Set(catalogBinaries(catalog).map((b) => b.path));
  const files: MetadataFiles = new Map();
  const ignored: string[] = [];
  for (const [name, data] of all) {
    if (isMetadataPath(name, binaryPaths)) files.set(name, data);
    else ignored.push(name);
  }
  addServedCopies(files);
  // A metadata file inside a binary's path (PROD/COMP/X/a.iso/b) would stop the binary's placing.
  refuseFileFolderClash([...files.keys(), ...binaryPaths], [], source);
  return { files, ignored, catalog, origin: path };
}

/** The files under `root`'s PROD/ (no dot names, so no temporary files), as `PROD/...` paths with their sizes. */
async function sizedFiles(root: string): Promise<Array<{ path: string; size: number }>> {
  const paths = (await listFiles(join(root, DEPOT_ROOT_DIR))).map((rel) => `${DEPOT_ROOT_DIR}/${rel}`);
  return Promise.all(paths.map(async (path) => ({ path, size: (await stat(join(root, path)).catch(() => undefined))?.size ?? 0 })));
}

async function readMetadataDir(dir: string): Promise<MetadataFiles> {
  // Accept the folder that contains PROD/ as well as PROD/ itself.
  const root = (await isDirectory(join(dir, DEPOT_ROOT_DIR))) ? dir : basename(dir) === DEPOT_ROOT_DIR ? resolve(dir, '..') : undefined;
  if (!root) throw usageError(`${dir} has no ${DEPOT_ROOT_DIR}/ folder: it is not extracted depot metadata.`);
  const entries = await sizedFiles(root);
  // Counted and sized before anything is read.
  if (entries.length > METADATA_LIMITS.maxEntries) {
    throw usageError(
      `${dir} holds ${entries.length} files under ${DEPOT_ROOT_DIR}/, more than the ${METADATA_LIMITS.maxEntries} depotkit reads: it is not the vendor's metadata.`,
    );
  }
  const total = entries.reduce((sum, e) => sum + e.size, 0);
  if (total > METADATA_LIMITS.maxTotalBytes)
    throw usageError(
      `${dir} holds more than ${formatBytes(METADATA_LIMITS.maxTotalBytes)} under ${DEPOT_ROOT_DIR}/: pass the metadata only, not a depot with binaries.`,
    );
  for (const e of entries) refuseControlChars(e.path, dir);
  const files: MetadataFiles = new Map();
  let read = 0;
  for (const name of entries.map((e) => e.path).sort()) {
    const file = join(root, name);
    let data: Buffer;
    try {
      data = await readFile(file);
    } catch (err) {
      throw describeFsError(err, file);
    }
    // A file may have grown since it was listed.
    read += data.length;
    if (read > METADATA_LIMITS.maxTotalBytes)
      throw usageError(
        `${dir} holds more than ${formatBytes(METADATA_LIMITS.maxTotalBytes)} under ${DEPOT_ROOT_DIR}/: pass the metadata only, not a depot with binaries.`,
      );
    files.set(name, data);
  }
  return files;
}

/** A name with control characters is no vendor file's, and would be written to disk and printed. */
function refuseControlChars(name: string, source: string): void {
  if (hasControlChars(name))
    throw usageError(`${source} holds an entry whose name has control characters ("${escapeControlChars(name)}"): it is not the vendor's metadata.`);
}

/**
 * Refuses a set of paths that cannot all exist: a file and a folder of the
 * same name (PROD/a and PROD/a/b). Found before anything is written, so the
 * layout cannot fail half-way.
 */
export function refuseFileFolderClash(files: Iterable<string>, folders: Iterable<string>, source: string): void {
  const fileSet = new Set(files);
  const folderOf = new Map<string, string>();
  for (const folder of folders) folderOf.set(folder, `${folder}/`);
  for (const file of fileSet) {
    const parts = file.split('/');
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join('/');
      if (!folderOf.has(prefix)) folderOf.set(prefix, file);
    }
  }
  for (const file of fileSet) {
    const inside = folderOf.get(file);
    if (inside !== undefined) {
      throw usageError(
        `${source} holds ${escapeControlChars(file)} both as a file and as a folder (${escapeControlChars(inside)}): it is not the vendor's metadata.`,
      );
    }
  }
}

/**
 * Reads the metadata archive in two passes: first its whole central
 * directory (names and sizes only, nothing decompressed), checked against
 * {@link METADATA_LIMITS} and for names that cannot be laid out; then the
 * data of the entries under PROD/. A hostile archive is refused in
 * milliseconds, before anything is decompressed or written.
 */
async function readMetadataZip(path: string): Promise<MetadataFiles> {
  const { zip, bytes: archiveBytes } = await openZipFile(path, 'Download the metadata archive again.');
  const notMetadata = "it is not the vendor's metadata archive";
  const files: MetadataFiles = new Map();
  try {
    const walk = await walkZip(zip, { label: path, bytes: archiveBytes }, METADATA_LIMITS, notMetadata, (name) => {
      // The archive may wrap PROD/ in a top folder: keep what starts at PROD/.
      const at = name.startsWith(`${DEPOT_ROOT_DIR}/`) ? 0 : name.indexOf(`/${DEPOT_ROOT_DIR}/`) + 1;
      if (at === 0 && !name.startsWith(`${DEPOT_ROOT_DIR}/`)) return undefined;
      const relative = posix.normalize(name.slice(at)).replace(/\/$/, '');
      // Never trust a name to stay under PROD/ once the wrapper is cut off.
      if ((!relative.startsWith(`${DEPOT_ROOT_DIR}/`) && !(relative === DEPOT_ROOT_DIR && name.endsWith('/'))) || relative.split('/').includes('..')) {
        throw usageError(`${path} holds an entry that leaves ${DEPOT_ROOT_DIR}/ (${name}): ${notMetadata}.`);
      }
      if (relative === DEPOT_ROOT_DIR) return undefined;
      return { name: relative, hold: true };
    });
    refuseFileFolderClash(
      walk.files.map((f) => f.name),
      walk.folders,
      path,
    );
    for (const { entry, name } of walk.files) files.set(name, await readEntryData(zip, entry));
  } catch (err) {
    if (err instanceof DepotkitError) throw err;
    throw usageError(`${path} is a damaged zip archive (${(err as Error).message}).`, 'Download the metadata archive again.');
  } finally {
    zip.close();
  }
  return files;
}
