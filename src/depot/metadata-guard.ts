import { cp } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { DEPOT_PATHS, DEPOT_STATE_DIR, TEMP_PREFIX } from '../constants.js';
import { DepotkitError, usageError } from '../util/errors.js';
import { readFileBounded } from '../util/fs.js';
import { isObject, parseJsonOrUndefined } from '../util/json.js';
import type { Catalog } from './catalog.js';
import { hclDate } from './hcl.js';
import { releaseVersionsOf } from './release-plan.js';
import { compareVersions } from '../util/versions.js';

/** What an incoming catalog changes against the one in place: product versions as `COMPONENT productVersion`. */
export interface CatalogChange {
  /** The incoming catalog is older than the one in place, and why (the field that says so). */
  older?: string;
  /** The incoming catalog is newer than the one in place, and why: its metadata may replace the depot's without `force`. */
  newer?: string;
  /** The incoming catalog carries a release date no release can have yet, and which: refused without `force`, and never taken as newer. */
  implausible?: string;
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

/**
 * A date later than this past now is implausible: no release or HCL is dated ahead by more than clocks and time
 * zones apart. Such a date would pass for newer than every real release, and then refuse the next one as older.
 */
const PLAUSIBLE_AHEAD_MS = 2 * 86_400_000;
const implausible = (t: number, now: Date) => t > now.getTime() + PLAUSIBLE_AHEAD_MS;
const day = (t: number) => new Date(t).toISOString().slice(0, 10);

/** The newest plausible release date of a catalog; the first implausible one, said as `COMPONENT version is dated ...`. */
function releaseDates(catalog: Catalog, now: Date): { newest?: number; implausible?: string } {
  let newest: number | undefined;
  let wrong: string | undefined;
  for (const [component, patches] of Object.entries(catalog.patches))
    for (const p of patches) {
      const t = p.releaseDate === undefined ? NaN : Date.parse(p.releaseDate);
      if (Number.isNaN(t)) continue;
      if (implausible(t, now)) wrong ??= `${component} ${p.productVersion} is dated ${day(t)}, after today (${day(now.getTime())})`;
      else if (newest === undefined || t > newest) newest = t;
    }
  return { ...(newest !== undefined ? { newest } : {}), ...(wrong !== undefined ? { implausible: wrong } : {}) };
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
function olderBecause(incoming: Catalog, current: Catalog, now: Date): string | undefined {
  const [a, b] = [releaseDates(incoming, now).newest, releaseDates(current, now).newest];
  if (a !== undefined && b !== undefined && a !== b) return a < b ? `its newest release date ${day(a)} is before ${day(b)}` : undefined;
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

/**
 * Compares an incoming catalog with the one in place; the manifests' texts, when given, name the releases. Dates
 * after `now` (by more than a clock's error) are left out of the order, and an incoming one is said (`implausible`).
 */
export function compareCatalogs(
  incoming: Catalog,
  current: Catalog,
  manifests: { incoming?: string; current?: string } = {},
  now: Date = new Date(),
): CatalogChange {
  const [inc, cur] = [entriesOf(incoming), entriesOf(current)];
  const older = olderBecause(incoming, current, now);
  const newer = older ? undefined : olderBecause(current, incoming, now);
  const wrong = releaseDates(incoming, now).implausible;
  const [after, before] = [releaseVersionsOf(incoming, manifests.incoming), releaseVersionsOf(current, manifests.current)];
  return {
    ...(older ? { older } : {}),
    ...(newer ? { newer } : {}),
    ...(wrong ? { implausible: wrong } : {}),
    releases: { added: after.filter((r) => !before.includes(r)), removed: before.filter((r) => !after.includes(r)) },
    added: [...inc].filter((e) => !cur.has(e)).sort(),
    removed: [...cur].filter((e) => !inc.has(e)).sort(),
  };
}

/** The folder the depot's replaced metadata is kept in, one per replacement. */
export function metadataBackupDir(root: string, at: Date = new Date()): string {
  return join(root, DEPOT_STATE_DIR, 'metadata-backup', at.toISOString().replace(/[:.]/g, '-'));
}

/** Copies the depot's metadata (PROD/metadata/ and the vSAN HCL's folder) aside before it is replaced; returns where. */
export async function backupMetadata(root: string): Promise<string> {
  const dir = metadataBackupDir(root);
  // PROD/metadata: the folder above the catalog's productVersionCatalog/v1.
  for (const folder of [dirname(dirname(dirname(DEPOT_PATHS.catalog))), dirname(DEPOT_PATHS.hclLastUpdated)]) {
    await cp(join(root, folder), join(dir, folder), {
      recursive: true,
      errorOnExist: false,
      // The incoming metadata may already sit there under temporary names: only the depot's own is kept.
      filter: (from) => !basename(from).startsWith(TEMP_PREFIX),
    }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }
  return dir;
}

/**
 * The refusal of an import whose catalog would move the depot's metadata backwards (`subject`, e.g. "The pack's
 * catalog", `verb` "unpacked"), or pass for newer by a date no release can have yet; undefined when it may go in.
 */
export function backwardsRefusal(change: CatalogChange, subject: string, root: string, verb: string, fix: string): DepotkitError | undefined {
  if (change.implausible)
    return usageError(
      `${subject} carries a date no release can have yet (${change.implausible}): ${verb}, it would pass for newer than every real release.`,
      fix,
    );
  if (change.older)
    return usageError(`${subject} is older than the one in ${root} (${change.older}): ${verb}, it would move the depot's metadata backwards.`, fix);
  return undefined;
}

/**
 * Why an incoming vSAN HCL (its lastupdatedtime.json, parsed) may not replace the depot's: it is older by its own
 * timestamp, or dated after today. Undefined when it may (or either cannot be read: verify says what is wrong).
 */
export function hclOlderBecause(incoming: unknown, current: unknown, now: Date = new Date()): string | undefined {
  const time = (v: unknown) => (isObject(v) && typeof v.timestamp === 'number' ? hclDate({ timestamp: v.timestamp, jsonUpdatedTime: '' }).getTime() : NaN);
  const [a, b] = [time(incoming), time(current)];
  if (Number.isNaN(a)) return undefined;
  const minute = (t: number) => `${new Date(t).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  if (implausible(a, now)) return `it is dated ${minute(a)}, after today (${day(now.getTime())})`;
  if (Number.isNaN(b) || implausible(b, now) || a >= b) return undefined;
  return `it was updated ${minute(a)}, the depot's ${minute(b)}`;
}

/** The vSAN HCL's files, where the installer reads them and the copies the vendor's archive carries: guarded together by the HCL's own time. */
export function isHclPath(path: string): boolean {
  return path === DEPOT_PATHS.hclAll || path === DEPOT_PATHS.hclLastUpdated || path.startsWith(`${DEPOT_PATHS.metadataHclDir}/`);
}

/** What an import did about an incoming vSAN HCL older than the depot's: kept the depot's, or (`force`) replaced it. */
export interface HclGuard {
  action: 'kept' | 'replaced';
  /** Why the incoming HCL is not newer. */
  because: string;
}

/** lastupdatedtime.json holds two fields: far less than this. */
export const HCL_TIME_BYTES = 64 * 1024;

/** A vSAN HCL's lastupdatedtime.json (or its temporary copy) parsed, for `hclOlderBecause`; undefined when it cannot be read. */
export async function readHclTime(path: string): Promise<unknown> {
  return readFileBounded(path, HCL_TIME_BYTES).then(
    (b) => parseJsonOrUndefined(b.toString('utf8')),
    () => undefined,
  );
}
