import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEPOT_PATHS } from '../constants.js';
import { type Catalog, parseCatalog } from './catalog.js';
import { type CatalogChange, backupMetadata, backwardsRefusal, compareCatalogs } from './metadata-guard.js';

/** What a build may do to the metadata in place. */
export interface BuildMetadataJudgement {
  /** What the metadata given changes against the depot's, when it changes anything. */
  change?: CatalogChange;
  /** Different metadata files in place may be replaced: `force`, or the catalog given is newer than the depot's. */
  replace: boolean;
}

/**
 * A build into a depot that has a catalog: an older incoming one is refused
 * unless `force` (the metadata would move backwards); a newer one replaces
 * the depot's metadata without it. Nothing is written here.
 */
export async function judgeBuildMetadata(
  out: string,
  source: { catalog: Catalog; files: Map<string, Buffer> },
  force: boolean,
): Promise<BuildMetadataJudgement> {
  const text = await readFile(join(out, DEPOT_PATHS.catalog), 'utf8').catch(() => undefined);
  if (text === undefined) return { replace: force };
  let current: Catalog;
  try {
    current = parseCatalog(text);
  } catch {
    // A depot catalog that cannot be read gives no order to keep: layout reports the difference.
    return { replace: force };
  }
  const currentManifest = await readFile(join(out, DEPOT_PATHS.manifest), 'utf8').catch(() => undefined);
  const change = compareCatalogs(source.catalog, current, { incoming: source.files.get(DEPOT_PATHS.manifest)?.toString('utf8'), current: currentManifest });
  const refusal = backwardsRefusal(
    change,
    'The metadata given',
    out,
    'built',
    'Give the metadata of the same or a newer release; `force` replaces it anyway (the current one is kept as a backup).',
  );
  if (refusal && !force) throw refusal;
  const changed = change.added.length + change.removed.length + change.releases.added.length + change.releases.removed.length > 0 || change.older;
  return { ...(changed ? { change } : {}), replace: force || change.newer !== undefined };
}

/** Keeps the depot's metadata aside before a build replaces it with metadata that changes it, newer or (forced) older. */
export async function backupBeforeBuild(out: string, change: CatalogChange | undefined): Promise<string | undefined> {
  return change ? backupMetadata(out) : undefined;
}
