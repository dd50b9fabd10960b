import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEPOT_PATHS } from '../../constants.js';
import { type Catalog, type CatalogBinary, CatalogError, catalogBinaries } from '../../depot/catalog.js';
import { type CatalogChange, backwardsRefusal, compareCatalogs } from '../../depot/metadata-guard.js';
import { depotFileUrl } from '../../util/depot-url.js';
import { DepotkitError, EXIT } from '../../util/errors.js';
import { MIRROR_LIMITS } from '../../util/limits.js';
import { parseTransferCatalog, readCatalogOf, sha256Hex } from '../contents.js';
import { type Seal, checkSeal, sealCode } from '../seal.js';
import { type BinarySelection, type SelectOptions, selectBinaries, selects } from '../select.js';
import type { Connection } from './connection.js';
import { fetchCatalog, fetchSmall } from './metadata.js';

/** The source's catalog as fetched: its bytes until they are written down, its digest, the binaries it names. */
export interface Source {
  bytes?: Buffer;
  sha256: string;
  /** The binaries to mirror (those chosen, with a selection); emptied once they are done. */
  binaries: CatalogBinary[];
  selection?: BinarySelection;
  /** What the source's metadata changes against the depot's in place, when that is another catalog. */
  change?: CatalogChange;
}

/** Where the mirror goes and whether it may move the metadata there backwards. */
export interface SourceTarget {
  root: string;
  force: boolean;
}

function refuseUnsealed(url: string, sha256: string, seal: Seal): never {
  throw new DepotkitError(
    `The catalog at ${url} is not the one the seal vouches for: its code is ${sealCode(sha256)}, the seal's is ${seal.catalog.match(/.{5}/g)!.join('-')}; nothing was written.`,
    EXIT.problems,
    'Compare the seal with the one written down at the other site; the source may have been changed or replaced.',
  );
}

/**
 * Fetches and reads the catalog, holds it to the seal when one was given,
 * checks a selection against it, and judges it against the depot's own
 * catalog in place: nothing is written before this passes.
 */
export async function readSource(conn: Connection, seal: Seal | undefined, select: SelectOptions | undefined, target: SourceTarget): Promise<Source> {
  const bytes = await fetchCatalog(conn);
  const sha256 = sha256Hex(bytes);
  const url = depotFileUrl(conn.depot, DEPOT_PATHS.catalog);
  if (seal && !checkSeal({ catalog: seal.catalog }, { catalogSha256: sha256 }).ok) refuseUnsealed(url, sha256, seal);
  let catalog: Catalog;
  try {
    catalog = parseTransferCatalog(bytes.toString('utf8'), url);
  } catch (err) {
    if (err instanceof CatalogError) throw new DepotkitError(err.message, EXIT.problems);
    throw err;
  }
  const current = await readCatalogOf(target.root).catch(() => undefined);
  const here = current && sha256Hex(current.bytes) !== sha256 ? current : undefined;
  // The release manifest names the builds of each release and the releases the metadata adds: read when either is asked.
  const manifestText = selects(select) || here ? (await fetchSmall(conn, DEPOT_PATHS.manifest, MIRROR_LIMITS.manifestBytes))?.toString('utf8') : undefined;
  const change = here ? await judgeAgainst(target, url, catalog, here.catalog, manifestText) : undefined;
  const binaries = catalogBinaries(catalog);
  const source = { bytes, sha256, binaries, ...(change ? { change } : {}) };
  if (!selects(select)) return source;
  // Checked against the catalog before anything is written: an unknown release or component is refused.
  const selection = selectBinaries(catalog, select, manifestText);
  return { ...source, binaries: binaries.filter((b) => selection.chosen.has(b.path)), selection };
}

/** A mirror never moves the depot's metadata backwards unless `force`: installers would then see releases vanish. */
async function judgeAgainst(target: SourceTarget, url: string, incoming: Catalog, current: Catalog, manifestText: string | undefined): Promise<CatalogChange> {
  const currentManifest = await readFile(join(target.root, DEPOT_PATHS.manifest), 'utf8').catch(() => undefined);
  const change = compareCatalogs(incoming, current, { incoming: manifestText, current: currentManifest });
  const refusal = backwardsRefusal(
    change,
    `The catalog at ${url}`,
    target.root,
    'mirrored',
    'Mirror a depot of the same or a newer release; `force` replaces the metadata anyway (the current one is kept as a backup).',
  );
  if (refusal && !target.force) throw refusal;
  return change;
}
