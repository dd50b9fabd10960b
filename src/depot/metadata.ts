import { open as openFile, readFile } from 'node:fs/promises';
import { basename, join, posix, resolve } from 'node:path';
import fg from 'fast-glob';
import yauzl from 'yauzl';
import { DEPOT_PATHS, DEPOT_ROOT_DIR, TEMP_PREFIX } from '../constants.js';
import { DepotkitError, describeFsError, usageError } from '../util/errors.js';
import { isDirectory } from '../util/fs.js';
import { type Catalog, catalogBinaries, parseCatalog } from './catalog.js';

/** Metadata files by web-root-relative path (`PROD/...`), exactly as shipped. */
export type MetadataFiles = Map<string, Buffer>;

/** The vendor's archive holds metadata only (a few MB); anything far larger is not one. */
const MAX_METADATA_BYTES = 1 << 30;

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
    throw usageError(`${source} has no ${DEPOT_PATHS.catalog}: it is not the vendor's depot metadata.`, 'Pass the vcf-<version>-offline-depot-metadata.zip archive or the folder it was extracted to.');
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
  return { files, ignored, catalog, origin: path };
}

async function readMetadataDir(dir: string): Promise<MetadataFiles> {
  // Accept the folder that contains PROD/ as well as PROD/ itself.
  const root = (await isDirectory(join(dir, DEPOT_ROOT_DIR))) ? dir : basename(dir) === DEPOT_ROOT_DIR ? resolve(dir, '..') : undefined;
  if (!root) throw usageError(`${dir} has no ${DEPOT_ROOT_DIR}/ folder: it is not extracted depot metadata.`);
  const names = await fg(`${DEPOT_ROOT_DIR}/**/*`, { cwd: root, onlyFiles: true, dot: false, ignore: [`**/${TEMP_PREFIX}*`] });
  const files: MetadataFiles = new Map();
  let total = 0;
  for (const name of names.sort()) {
    const file = join(root, name);
    let data: Buffer;
    try {
      data = await readFile(file);
    } catch (err) {
      throw describeFsError(err, file);
    }
    total += data.length;
    if (total > MAX_METADATA_BYTES) throw usageError(`${dir} holds more than 1 GiB under ${DEPOT_ROOT_DIR}/: pass the metadata only, not a depot with binaries.`);
    files.set(name, data);
  }
  return files;
}

function openZip(path: string): Promise<yauzl.ZipFile> {
  return new Promise((resolvePromise, reject) => {
    yauzl.open(path, { lazyEntries: true, autoClose: true, validateEntrySizes: true }, (err, zip) => (err ? reject(err) : resolvePromise(zip)));
  });
}

async function readMetadataZip(path: string): Promise<MetadataFiles> {
  // A clear error for a missing or unreadable file before yauzl's generic one.
  try {
    await (await openFile(path, 'r')).close();
  } catch (err) {
    throw describeFsError(err, path);
  }
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(path);
  } catch (err) {
    throw usageError(`${path} is not a readable zip archive (${(err as Error).message}).`, 'Download the metadata archive again.');
  }
  const files: MetadataFiles = new Map();
  let total = 0;
  try {
    await new Promise<void>((resolvePromise, reject) => {
      zip.on('error', reject);
      zip.on('end', () => resolvePromise());
      zip.on('entry', (entry: yauzl.Entry) => {
        // yauzl has already refused absolute paths and `..` in entry names.
        const name = entry.fileName;
        // The archive may wrap PROD/ in a top folder: keep what starts at PROD/.
        const at = name.startsWith(`${DEPOT_ROOT_DIR}/`) ? 0 : name.indexOf(`/${DEPOT_ROOT_DIR}/`) + 1;
        const underRoot = at > 0 || name.startsWith(`${DEPOT_ROOT_DIR}/`);
        if (name.endsWith('/') || !underRoot) return zip.readEntry();
        const relative = posix.normalize(name.slice(at));
        // Never trust a name to stay under PROD/ once the wrapper is cut off.
        if (!relative.startsWith(`${DEPOT_ROOT_DIR}/`) || relative.split('/').includes('..')) {
          return reject(usageError(`${path} holds an entry that leaves ${DEPOT_ROOT_DIR}/ (${name}): it is not the vendor's metadata archive.`));
        }
        total += entry.uncompressedSize;
        if (total > MAX_METADATA_BYTES) return reject(usageError(`${path} unpacks to more than 1 GiB: it is not a metadata archive.`));
        zip.openReadStream(entry, (err, stream) => {
          if (err) return reject(err);
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('error', reject);
          stream.on('end', () => {
            files.set(relative, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  } catch (err) {
    if (err instanceof DepotkitError) throw err;
    throw usageError(`${path} is a damaged zip archive (${(err as Error).message}).`, 'Download the metadata archive again.');
  } finally {
    zip.close();
  }
  return files;
}
