import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { COMPONENT_METADATA_SUFFIXES, DEPOT_PATHS, DEPOT_ROOT_DIR, TEMP_PREFIX } from '../constants.js';
import { type Catalog, type CatalogBinary, catalogBinaries, catalogRelease, fileNameTooLong, parseCatalog } from '../depot/catalog.js';
import { stateFileFor } from '../depot/place.js';
import { describeFsError, usageError } from '../util/errors.js';
import { isDirectory } from '../util/fs.js';
import { listFiles } from '../util/walk.js';
import type { FileKind } from './format.js';

export const sha256Hex = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

export interface DepotFile {
  /** Web-root-relative, `PROD/...`. */
  path: string;
  size: number;
  mtimeMs: number;
  kind: FileKind;
}

export interface DepotContents {
  root: string;
  catalog: Catalog;
  catalogBytes: Buffer;
  catalogSha256: string;
  release: string;
  /** Every binary the catalog names. */
  binaries: CatalogBinary[];
  /** Files under PROD/ that belong to the depot: catalog binaries present (any size) and metadata. */
  files: Map<string, DepotFile>;
  /** Catalog binaries absent from the tree. */
  missing: CatalogBinary[];
  /** Catalog binaries present with another size than the catalog's. */
  wrongSize: { binary: CatalogBinary; actualSize: number }[];
  /** Files in a component folder that the catalog does not name: never fetched by the installer. */
  strays: { path: string; size: number }[];
  /** Temporary files left by an interrupted run (anywhere under the root, the state folder included). */
  temps: { path: string; size: number }[];
}

/** Whether a web-root-relative path sits directly in a component folder (`PROD/COMP/<component>/<file>`). */
export function inComponentFolder(path: string): boolean {
  return path.startsWith(`${DEPOT_PATHS.comp}/`) && path.slice(DEPOT_PATHS.comp.length + 1).split('/').length === 2;
}

/** Metadata the vendor puts in a component folder (not a binary, never a stray). */
export function isComponentMetadata(path: string): boolean {
  return COMPONENT_METADATA_SUFFIXES.some((s) => path.endsWith(s));
}

/**
 * A catalog as the transfers read it: a file name longer than NAME_MAX fails
 * only its binary (no file system takes it), never the whole depot.
 */
export function parseTransferCatalog(text: string, source: string): Catalog {
  return parseCatalog(text, source, { allowLongNames: true });
}

/** Why a binary cannot be placed under the file name its catalog gives, or undefined when it can. */
export function unplaceableName(fileName: string): string | undefined {
  const tooLong = fileNameTooLong(fileName);
  return tooLong && `its file name ${tooLong}: no file system takes it`;
}

export async function readCatalogOf(root: string): Promise<{ catalog: Catalog; bytes: Buffer } | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(join(root, DEPOT_PATHS.catalog));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw describeFsError(err, join(root, DEPOT_PATHS.catalog));
  }
  return { catalog: parseTransferCatalog(bytes.toString('utf8'), join(root, DEPOT_PATHS.catalog)), bytes };
}

/** What a depot tree holds, classified against its catalog; reads only the catalog. */
export async function readDepotContents(dir: string): Promise<DepotContents> {
  const root = resolve(dir);
  if (!(await isDirectory(join(root, DEPOT_ROOT_DIR)))) {
    throw usageError(`${root} has no ${DEPOT_ROOT_DIR}/ folder: it is not a depot.`, 'Give the depot root: the folder that contains PROD/.');
  }
  const read = await readCatalogOf(root);
  if (!read)
    throw usageError(
      `${root} has no catalog (${DEPOT_PATHS.catalog}).`,
      `Lay out the metadata first: \`buildDepot\` \`metadata\` <zip> \`binaries\` <folder> \`out\` ${root}.`,
    );
  const binaries = catalogBinaries(read.catalog);
  const named = new Map(binaries.map((b) => [b.path, b]));
  const contents: DepotContents = {
    root,
    catalog: read.catalog,
    catalogBytes: read.bytes,
    catalogSha256: sha256Hex(read.bytes),
    release: catalogRelease(read.catalog),
    binaries,
    files: new Map(),
    missing: [],
    wrongSize: [],
    strays: [],
    temps: [],
  };
  const stateDir = resolve(stateFileFor(root), '..');
  const found = (
    await Promise.all([DEPOT_ROOT_DIR, basename(stateDir)].map(async (top) => (await listFiles(join(root, top), { dot: true })).map((rel) => `${top}/${rel}`)))
  ).flat();
  for (const path of found.sort()) {
    // stat follows a symlink placed by `build --mode symlink`: its target is the content.
    const info = await stat(join(root, path)).catch(() => undefined);
    if (!info?.isFile()) continue;
    const binary = named.get(path);
    // A name like a temporary file's that the catalog names is the depot's binary, never cleared as a killed run's.
    if (basename(path).startsWith(TEMP_PREFIX) && !binary) {
      contents.temps.push({ path, size: info.size });
      continue;
    }
    if (!path.startsWith(`${DEPOT_ROOT_DIR}/`)) continue;
    if (binary) {
      contents.files.set(path, { path, size: info.size, mtimeMs: info.mtimeMs, kind: 'binary' });
      if (info.size !== binary.size) contents.wrongSize.push({ binary, actualSize: info.size });
    } else if (inComponentFolder(path) && !isComponentMetadata(path)) {
      contents.strays.push({ path, size: info.size });
    } else {
      contents.files.set(path, { path, size: info.size, mtimeMs: info.mtimeMs, kind: 'metadata' });
    }
  }
  contents.missing = binaries.filter((b) => !contents.files.has(b.path));
  return contents;
}
