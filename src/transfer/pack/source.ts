import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DEPOT_PATHS, DEPOT_ROOT_DIR } from '../../constants.js';
import { DepotkitError, EXIT, usageError } from '../../util/errors.js';
import { isDirectory } from '../../util/fs.js';
import type { EsxSelectOptions } from '../esx-mirror/select.js';
import { type DepotFile, readDepotContents } from '../contents.js';
import { releaseVersions } from '../releases.js';
import { type EsxSource, readEsxSource } from './esx.js';
import { type BinarySelection, type SelectOptions, selectBinaries, selects } from '../select.js';

/** What pack needs of the depot's contents. */
export interface Source {
  root: string;
  /** The catalog; absent when the ESX depots go alone (PROD/ is not read). */
  catalogSha256?: string;
  release?: string;
  /** The releases its metadata describes. */
  releases: string[];
  files: DepotFile[];
  /** Each binary's checksum in the catalog, by path. */
  checksums: Map<string, string>;
  missing: { path: string; size: number }[];
  wrongSize: { path: string; size: number; actualSize: number }[];
  strays: string[];
  /** With a selection: the binaries chosen, and those left out (not carried, not counted missing). */
  selection?: BinarySelection;
  /** The ESX depots beside PROD/, their files among `files`; `false` when asked to leave them out. */
  esx?: EsxSource | false;
}

/** The depot's contents, of which only what pack needs is kept: the catalog parsed and its binaries are let go (hundreds of MB at 200,000 binaries). */
export async function readSource(dir: string, select?: SelectOptions, esxSelect?: EsxSelectOptions | false): Promise<Source> {
  const inventory = await readDepotContents(dir);
  const manifestText = await readFile(join(inventory.root, DEPOT_PATHS.manifest), 'utf8').catch(() => undefined);
  const selection = selects(select) ? selectBinaries(inventory.catalog, select, manifestText) : undefined;
  const wanted = (path: string) => !selection?.leftOut.has(path);
  const esx = esxSelect === false ? false : await readEsxSource(inventory.root, esxSelect);
  // An ESX depot inside a component's folder (PROD/COMP/ESX_HOST/main/) is carried by its own rules, not as PROD/'s metadata.
  const inEsx = (path: string) => esx !== false && esx !== undefined && esx.manifest.depots.some((d) => path.startsWith(`${d.folder}/`));
  return {
    root: inventory.root,
    catalogSha256: inventory.catalogSha256,
    release: inventory.release,
    releases: releaseVersions(manifestText, inventory.catalog),
    files: [...[...inventory.files.values()].filter((f) => !inEsx(f.path)), ...(esx ? esx.files : [])],
    checksums: new Map([...inventory.binaries.map((b) => [b.path, b.checksum] as const), ...(esx ? esx.checksums : [])]),
    missing: inventory.missing.filter((b) => wanted(b.path)).map((b) => ({ path: b.path, size: b.size })),
    wrongSize: inventory.wrongSize.filter((w) => wanted(w.binary.path)).map((w) => ({ path: w.binary.path, size: w.binary.size, actualSize: w.actualSize })),
    strays: inventory.strays.map((s) => s.path),
    ...(selection ? { selection } : {}),
    ...(esx !== undefined ? { esx } : {}),
  };
}

/** The ESX depots of a tree alone, for a site that patches hosts only: `PROD/` is neither read nor carried (the tree may have none). */
export async function readEsxOnlySource(dir: string, esxSelect?: EsxSelectOptions): Promise<Source> {
  const root = resolve(dir);
  if (!(await isDirectory(root))) throw usageError(`${root} is not a folder.`);
  const esx = await readEsxSource(root, esxSelect);
  if (!esx)
    throw usageError(
      `${root} holds no ESX depot (a folder with a root index or a UMDS store, beside ${DEPOT_ROOT_DIR}/ or in a component's folder of it): there is nothing to pack.`,
    );
  return { root, releases: [], files: esx.files, checksums: esx.checksums, missing: [], wrongSize: [], strays: [], esx };
}

export function changedWhilePacking(root: string, path: string): DepotkitError {
  return new DepotkitError(
    `${join(root, path)} changed while it was being packed.`,
    EXIT.problems,
    'Pack again once nothing writes to the depot (a build or mirror under way?).',
  );
}
