import { open, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DEPOT_PATHS, DEPOT_ROOT_DIR } from '../constants.js';
import { catalogBinaries, catalogRelease } from '../depot/catalog.js';
import { readMetadata } from '../depot/metadata.js';
import { describeFsError, usageError } from '../util/errors.js';
import { isDirectory } from '../util/fs.js';
import { sha256Files } from '../util/hash.js';
import { type PackEsx, type TreeEntry, esxMetadataSha256, isMetadataKind, looksLikeManifest, parseManifest } from './format.js';
import { type EsxSource, readEsxSource } from './pack/esx.js';
import { type DepotFile, readDepotContents, sha256Hex } from './contents.js';
import { releaseVersions } from './releases.js';

/**
 * What one side of a comparison holds, whatever it was given as: a depot
 * folder, the vendor's metadata archive (or the folder it was extracted to),
 * or a pack manifest. Used by `pack --since` (what the other side already has)
 * and by `diff`.
 */
export interface DepotRecord {
  kind: 'depot' | 'metadata' | 'pack';
  source: string;
  /** SHA-256 of its catalog; null when a pack manifest's tree lacks it. */
  catalogSha256: string | null;
  release?: string;
  /** Files held, by path: binaries present with the catalog's size (their checksum taken from the catalog) and metadata (hashed). */
  files: Map<string, TreeEntry>;
  /** Binaries its catalog names, whether held or not. */
  named: Map<string, { size: number; sha256: string; component: string; productVersion: string }>;
  /** The releases its metadata describes. */
  releases: string[];
  /** For a pack: its id. */
  packId?: string;
  /** The ESX depots beside PROD/, when it has any; their files are in `files`. */
  esx?: RecordEsx;
}

export interface RecordEsx {
  products: PackEsx['products'];
  /** The VIBs their metadata lists (a depot), or that it holds (a pack manifest), by path. */
  vibs: Map<string, { size: number; sha256: string }>;
}

/** SHA-256 of small files, on worker threads. */
async function hashAll(root: string, paths: string[]): Promise<Map<string, string>> {
  const results = await sha256Files(paths.map((p) => join(root, p)));
  const out = new Map<string, string>();
  results.forEach((r, i) => {
    if (r.error) throw describeFsError(r.error, r.path);
    out.set(paths[i]!, r.sha256!);
  });
  return out;
}

async function headOf(path: string): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

export async function loadRecord(source: string, what: string): Promise<DepotRecord> {
  const path = resolve(source);
  let info;
  try {
    info = await stat(path);
  } catch (err) {
    throw describeFsError(err, source);
  }
  if (info.isDirectory()) {
    if (await isDirectory(join(path, DEPOT_ROOT_DIR))) return recordOfDepot(path);
    // A site that patches hosts only holds ESX depots and no PROD/.
    const esx = await readEsxSource(path);
    if (!esx)
      throw usageError(
        `${what} ${source} has no ${DEPOT_ROOT_DIR}/ folder and holds no ESX depot: give a depot, a folder of ESX depots, the vendor's metadata archive, or a pack manifest.`,
      );
    return {
      kind: 'depot',
      source: path,
      catalogSha256: null,
      releases: [],
      files: await entriesOf(path, esx.files, new Map(), esx),
      named: new Map(),
      esx: esxOf(esx),
    };
  }
  if (looksLikeManifest(await headOf(path))) {
    const manifest = parseManifest(await readFile(path, 'utf8'), source);
    const files = new Map(manifest.tree.map((t) => [t.path, t]));
    const esxVibs = manifest.tree.filter((t) => t.kind === 'esx-vib').map((t) => [t.path, { size: t.size, sha256: t.sha256 }] as const);
    const named = new Map(
      manifest.tree
        .filter((t) => t.kind === 'binary')
        .map((t) => [t.path, { size: t.size, sha256: t.sha256, component: t.path.split('/')[2] ?? '', productVersion: '' }]),
    );
    return {
      kind: 'pack',
      source: path,
      // A pack of ESX depots alone names no catalog: it is compared by its ESX depots only.
      ...('catalogSha256' in manifest.source
        ? { catalogSha256: manifest.source.catalogSha256, release: manifest.source.release, releases: manifest.source.releases ?? [] }
        : { catalogSha256: null, releases: [] }),
      files,
      named,
      packId: manifest.packId,
      ...(manifest.esx ? { esx: { products: manifest.esx.products, vibs: new Map(esxVibs) } } : {}),
    };
  }
  // Anything else must be the vendor's metadata archive; readMetadata says so when it is not.
  const metadata = await readMetadata(path);
  const files = new Map<string, TreeEntry>();
  for (const [p, data] of metadata.files) files.set(p, { path: p, size: data.length, sha256: sha256Hex(data), kind: 'metadata' });
  const catalogBytes = metadata.files.get(DEPOT_PATHS.catalog);
  return {
    kind: 'metadata',
    source: path,
    catalogSha256: catalogBytes ? sha256Hex(catalogBytes) : null,
    release: catalogRelease(metadata.catalog),
    releases: releaseVersions(metadata.files.get(DEPOT_PATHS.manifest)?.toString('utf8'), metadata.catalog),
    files,
    named: new Map(
      catalogBinaries(metadata.catalog).map((b) => [b.path, { size: b.size, sha256: b.checksum, component: b.component, productVersion: b.productVersion }]),
    ),
  };
}

const esxOf = (esx: EsxSource): RecordEsx => ({ products: esx.manifest.products, vibs: esx.listed });

/**
 * The files a tree holds, by path: metadata hashed (a metadata zip already hashed as its VIBs were held to it is not
 * read again), each VIB with the SHA-256 its metadata states, each binary with its catalog's when of the catalog's size.
 */
async function entriesOf(root: string, all: readonly DepotFile[], named: DepotRecord['named'], esx: EsxSource | undefined): Promise<Map<string, TreeEntry>> {
  const known = (f: DepotFile) => (f.kind === 'esx-metadata' ? esx?.checksums.get(f.path) : undefined);
  const hashes = await hashAll(
    root,
    all.filter((f) => isMetadataKind(f.kind) && known(f) === undefined).map((f) => f.path),
  );
  const files = new Map<string, TreeEntry>();
  for (const f of all) {
    if (isMetadataKind(f.kind)) files.set(f.path, { path: f.path, size: f.size, sha256: known(f) ?? hashes.get(f.path)!, kind: f.kind });
    else if (f.kind === 'esx-vib') files.set(f.path, { path: f.path, size: f.size, sha256: esx!.checksums.get(f.path)!, kind: f.kind });
    else {
      const binary = named.get(f.path)!;
      // Trusted by the catalog, not read: a binary of another size is not held.
      if (f.size === binary.size) files.set(f.path, { path: f.path, size: f.size, sha256: binary.sha256, kind: 'binary' });
    }
  }
  return files;
}

/**
 * The SHA-256 that names the ESX depots of a tree (`esxMetadataSha256` of their files other than VIBs), as a delta of
 * them names its base and a pack of them its source; undefined when the tree holds none.
 */
export async function esxSha256OfTree(root: string): Promise<string | undefined> {
  const esx = await readEsxSource(root);
  return esx && esxMetadataSha256([...(await entriesOf(root, esx.files, new Map(), esx)).values()]);
}

async function recordOfDepot(root: string): Promise<DepotRecord> {
  const inventory = await readDepotContents(root);
  const named = new Map(
    inventory.binaries.map((b) => [b.path, { size: b.size, sha256: b.checksum, component: b.component, productVersion: b.productVersion }]),
  );
  const esx = await readEsxSource(root);
  // An ESX depot inside a component's folder is the ESX depot's, not PROD/'s metadata.
  const inEsx = (path: string) => esx?.manifest.depots.some((d) => path.startsWith(`${d.folder}/`)) ?? false;
  const all = [...[...inventory.files.values()].filter((f) => !inEsx(f.path)), ...(esx?.files ?? [])];
  const files = await entriesOf(root, all, named, esx);
  const kind = inventory.binaries.length > 0 && inventory.missing.length === inventory.binaries.length ? 'metadata' : 'depot';
  const manifestText = await readFile(join(root, DEPOT_PATHS.manifest), 'utf8').catch(() => undefined);
  return {
    kind,
    source: root,
    catalogSha256: inventory.catalogSha256,
    release: inventory.release,
    releases: releaseVersions(manifestText, inventory.catalog),
    files,
    named,
    ...(esx ? { esx: esxOf(esx) } : {}),
  };
}
