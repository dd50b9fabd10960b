import { stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { DEPOT_PATHS, DEPOT_ROOT_DIR, DEPOT_STATE_DIR, TEMP_PREFIX } from '../constants.js';
import type { Finding } from '../util/findings.js';
import { readEsxChain } from './chain.js';
import { type LocatedDepot, locateDepots } from './locate.js';
import type { EsxMetadata, EsxProduct, EsxVib } from './model.js';
import { folderSource } from './source.js';
import { listFiles } from '../util/walk.js';
import { readUmdsStore } from './verify.js';

/** An ESX depot of a served tree, its chain read. */
export interface TreeEsxDepot extends LocatedDepot {
  products: EsxProduct[];
  /** The metadata zips read, by tree-relative path. */
  metadata: Map<string, EsxMetadata>;
  /** Every index and metadata zip could be read: the VIBs it lists are all it lists. */
  whole: boolean;
}

export interface TreeFile {
  /** Tree-relative. */
  path: string;
  size: number;
  mtimeMs: number;
}

/** The ESX depots beside (or inside) a served tree's `PROD/`, with what their files are. */
export interface TreeEsx {
  depots: TreeEsxDepot[];
  /** Every file of their folders but their state folders and temporary files. */
  files: TreeFile[];
  /** Temporary files of killed runs in their folders. */
  temps: TreeFile[];
  /** The VIBs their metadata lists, by tree-relative path. */
  vibs: Map<string, EsxVib>;
  findings: Finding[];
}

/**
 * Where an ESX depot of a served tree may lie: anywhere beside `PROD/`, or inside a component's folder
 * of it (the vendor's layout, `PROD/COMP/ESX_HOST/main/`); never the tree itself or `PROD/`'s own
 * metadata, which the catalog's rules cover.
 */
function carriedFolder(folder: string): boolean {
  if (folder === '' || folder === DEPOT_ROOT_DIR) return false;
  return !folder.startsWith(`${DEPOT_ROOT_DIR}/`) || folder.split('/').length >= 4;
}

async function statFiles(root: string, paths: readonly string[]): Promise<TreeFile[]> {
  const out: TreeFile[] = [];
  for (const path of paths) {
    // A link is followed (`depot build --mode symlink` lays files out so): its target is the content.
    const info = await stat(join(root, path)).catch(() => undefined);
    if (info?.isFile()) out.push({ path, size: info.size, mtimeMs: info.mtimeMs });
  }
  return out;
}

/**
 * Reads the ESX depots of a served tree (`umds-patch-store/`, or any other folder with a root index or a
 * UMDS store): each one's chain, the VIBs its metadata lists, and its files. Only the tree's listing and
 * the indexes and metadata zips are read; a broken link is a finding, as `esx verify` words it.
 */
export async function readTreeEsx(dir: string): Promise<TreeEsx> {
  const root = resolve(dir);
  // PROD/'s own files are the catalog's: only folders below a component's folder may hold an ESX depot there.
  const mayHold = (path: string) => {
    const parts = path.split('/');
    if (parts.includes(DEPOT_STATE_DIR)) return false;
    return parts[0] !== DEPOT_ROOT_DIR || (path.startsWith(`${DEPOT_PATHS.comp}/`) && parts.length >= 5);
  };
  const listed = (await listFiles(root, { dot: true })).filter(mayHold).sort();
  const located = locateDepots(listed.filter((p) => !basename(p).startsWith(TEMP_PREFIX))).filter((d) => carriedFolder(d.folder));
  const result: TreeEsx = { depots: [], files: [], temps: [], vibs: new Map(), findings: [] };
  if (located.length === 0) return result;
  const inDepot = (path: string) => located.some((d) => path.startsWith(`${d.folder}/`));
  const ours = listed.filter(inDepot);
  const files = await statFiles(root, ours);
  result.files = files.filter((f) => !basename(f.path).startsWith(TEMP_PREFIX));
  result.temps = files.filter((f) => basename(f.path).startsWith(TEMP_PREFIX));
  const source = folderSource(root);
  const names = result.files.map((f) => f.path);
  for (const depot of located) {
    const findings: Finding[] = [];
    const read = depot.kind === 'index' ? await readEsxChain(source, depot.index, findings) : await readUmdsStore(source, depot, names, findings);
    const whole = !findings.some((f) => f.severity === 'error');
    result.findings.push(...findings);
    result.depots.push({ ...depot, products: read.products, metadata: read.metadata, whole });
    for (const zip of read.metadata.values()) for (const vib of zip.vibs) if (!result.vibs.has(vib.path)) result.vibs.set(vib.path, vib);
  }
  return result;
}

/** The ESX depot folder `path` lies in, if any. */
export function esxFolderOf(depots: readonly { folder: string }[], path: string): string | undefined {
  return depots.find((d) => path.startsWith(`${d.folder}/`))?.folder;
}
