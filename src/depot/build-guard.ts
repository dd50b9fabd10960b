import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEPOT_PATHS } from '../constants.js';
import { usageError } from '../util/errors.js';
import { type Catalog, parseCatalog } from './catalog.js';
import { type CatalogChange, backupMetadata, compareCatalogs } from './metadata-guard.js';

/**
 * A build into a depot that has a catalog: an older incoming one is refused
 * unless `force` (the metadata would move backwards), and the change is
 * returned when the catalogs differ. Nothing is written here.
 */
export async function judgeBuildMetadata(out: string, incoming: Catalog, force: boolean): Promise<CatalogChange | undefined> {
  const text = await readFile(join(out, DEPOT_PATHS.catalog), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  let current: Catalog;
  try {
    current = parseCatalog(text);
  } catch {
    // A depot catalog that cannot be read gives no order to keep: layout reports the difference.
    return undefined;
  }
  const change = compareCatalogs(incoming, current);
  if (change.older && !force) {
    throw usageError(
      `The metadata given is older than the one in ${out} (${change.older}): built, it would move the depot's metadata backwards.`,
      'Give the metadata of the same or a newer release; `force` replaces it anyway (the current one is kept as a backup).',
    );
  }
  return change.added.length + change.removed.length > 0 || change.older ? change : undefined;
}

/** Keeps the depot's metadata aside before a build replaces it. */
export async function backupBeforeBuild(out: string, change: CatalogChange | undefined, force: boolean): Promise<string | undefined> {
  return change && force ? backupMetadata(out) : undefined;
}
