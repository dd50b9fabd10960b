import { cp } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { DEPOT_PATHS, TEMP_PREFIX } from '../constants.js';
import type { Catalog } from './catalog.js';
import { releaseVersionsOf } from './release-plan.js';
import { compareVersions } from './versions.js';

/** What an incoming catalog changes against the one in place: product versions as `COMPONENT productVersion`. */
export interface CatalogChange {
  /** The incoming catalog is older than the one in place, and why (the field that says so). */
  older?: string;
  /** The incoming catalog is newer than the one in place, and why: its metadata may replace the depot's without `force`. */
  newer?: string;
  /** The releases the metadata describes that come and go. */
  releases: { added: string[]; removed: string[] };
  added: string[];
  removed: string[];
}

/** What an import reports of the metadata it replaced: the change, and where the old metadata was kept. */
export type MetadataChange = Omit<CatalogChange, 'older' | 'newer'> & { backup?: string };

/** The change as an import reports it. */
export function metadataChangeOf(change: CatalogChange, backup: string | undefined): MetadataChange {
  return { releases: change.releases, added: change.added, removed: change.removed, ...(backup ? { backup } : {}) };
}

function entriesOf(catalog: Catalog): Set<string> {
  const out = new Set<string>();
  for (const [component, patches] of Object.entries(catalog.patches)) for (const p of patches) out.add(`${component} ${p.productVersion}`);
  return out;
}

function newestReleaseDate(catalog: Catalog): number | undefined {
  let newest: number | undefined;
  for (const patches of Object.values(catalog.patches))
    for (const p of patches) {
      const t = p.releaseDate === undefined ? NaN : Date.parse(p.releaseDate);
      if (!Number.isNaN(t) && (newest === undefined || t > newest)) newest = t;
    }
  return newest;
}

function highestVersions(catalog: Catalog): Map<string, string> {
  const out = new Map<string, string>();
  for (const [component, patches] of Object.entries(catalog.patches))
    for (const p of patches) {
      const seen = out.get(component);
      if (seen === undefined || compareVersions(p.productVersion, seen) > 0) out.set(component, p.productVersion);
    }
  return out;
}

/**
 * Why `incoming` is older than `current`, or undefined. The catalog carries no
 * sequence number the sources name, so the order is read from what it has: the
 * newest release date when both give one, else the highest product version of
 * each component both name (older when one is lower and none higher).
 */
function olderBecause(incoming: Catalog, current: Catalog): string | undefined {
  const [a, b] = [newestReleaseDate(incoming), newestReleaseDate(current)];
  if (a !== undefined && b !== undefined && a !== b) {
    return a < b ? `its newest release date ${new Date(a).toISOString().slice(0, 10)} is before ${new Date(b).toISOString().slice(0, 10)}` : undefined;
  }
  const mine = highestVersions(current);
  let lower: string | undefined;
  for (const [component, version] of highestVersions(incoming)) {
    const theirs = mine.get(component);
    if (theirs === undefined) continue;
    const order = compareVersions(version, theirs);
    if (order > 0) return undefined;
    if (order < 0) lower ??= `its newest ${component} is ${version}, the depot's ${theirs}`;
  }
  return lower;
}

/** Compares an incoming catalog with the one in place; the manifests' texts, when given, name the releases. */
export function compareCatalogs(incoming: Catalog, current: Catalog, manifests: { incoming?: string; current?: string } = {}): CatalogChange {
  const [inc, cur] = [entriesOf(incoming), entriesOf(current)];
  const older = olderBecause(incoming, current);
  const newer = older ? undefined : olderBecause(current, incoming);
  const [after, before] = [releaseVersionsOf(incoming, manifests.incoming), releaseVersionsOf(current, manifests.current)];
  return {
    ...(older ? { older } : {}),
    ...(newer ? { newer } : {}),
    releases: { added: after.filter((r) => !before.includes(r)), removed: before.filter((r) => !after.includes(r)) },
    added: [...inc].filter((e) => !cur.has(e)).sort(),
    removed: [...cur].filter((e) => !inc.has(e)).sort(),
  };
}

/** The folder the depot's replaced metadata is kept in, one per replacement. */
export function metadataBackupDir(root: string, at: Date = new Date()): string {
  return join(root, '.depotkit', 'metadata-backup', at.toISOString().replace(/[:.]/g, '-'));
}

/** Copies the depot's metadata (PROD/metadata/) aside before it is replaced; returns where. */
export async function backupMetadata(root: string): Promise<string> {
  const dir = metadataBackupDir(root);
  // PROD/metadata: the folder above the catalog's productVersionCatalog/v1.
  const metadata = dirname(dirname(dirname(DEPOT_PATHS.catalog)));
  await cp(join(root, metadata), join(dir, metadata), {
    recursive: true,
    errorOnExist: false,
    // The incoming metadata may already sit there under temporary names: only the depot's own is kept.
    filter: (from) => !basename(from).startsWith(TEMP_PREFIX),
  });
  return dir;
}
