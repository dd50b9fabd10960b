import { rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { DEPOT_ROOT_DIR, MIRROR_PARTIAL_TAG, TEMP_PREFIX } from '../constants.js';
import { type DepotLock, type DepotLockHolder, withDepotLock } from '../depot/lock.js';
import { type TreeEsx, esxFolderOf, readTreeEsx } from '../esx/tree.js';
import { describeFsError } from '../util/errors.js';
import { isDirectory } from '../util/fs.js';
import { type DepotContents, readDepotContents } from './contents.js';

export interface PruneCandidate {
  path: string;
  size: number;
  /**
   * `stale`: a file in a component folder the catalog does not name; `unlisted`: a VIB file of an ESX depot that
   * no metadata lists; `temporary`: left by a killed run; `partial`: a mirror's interrupted download.
   */
  kind: 'stale' | 'unlisted' | 'temporary' | 'partial';
}

export interface PruneReport {
  depot: string;
  /** Whether the candidates were removed (`--yes`) or only listed. */
  removed: boolean;
  candidates: PruneCandidate[];
  bytes: number;
  /** With `yes`, the depot's lock was held; `tookOverFrom` when a run that is gone had left it. */
  lock?: { tookOverFrom?: DepotLockHolder };
}

const tempKind = (path: string) => (basename(path).startsWith(`${TEMP_PREFIX}${MIRROR_PARTIAL_TAG}`) ? ('partial' as const) : ('temporary' as const));

function candidatesOf(inventory: Contents, esx: TreeEsx): PruneCandidate[] {
  // Whatever its name looks like, a file the catalog names is the depot's (the inventory counts it so; checked again here).
  const named = new Set(inventory.binaries.map((b) => b.path));
  // A depot whose chain breaks lists fewer VIBs than it holds: none of its VIBs is a candidate then.
  const whole = esx.depots.filter((d) => d.whole);
  const unlisted = esx.files.filter((f) => f.path.endsWith('.vib') && !esx.vibs.has(f.path) && esxFolderOf(whole, f.path) !== undefined);
  return [
    ...inventory.strays.map((s) => ({ ...s, kind: 'stale' as const })),
    ...unlisted.map((f) => ({ path: f.path, size: f.size, kind: 'unlisted' as const })),
    ...[...inventory.temps, ...esx.temps.filter((t) => !inventory.temps.some((i) => i.path === t.path))].map((t) => ({
      path: t.path,
      size: t.size,
      kind: tempKind(t.path),
    })),
  ]
    .filter((c) => !named.has(c.path))
    .sort((a, b) => a.path.localeCompare(b.path));
}

type Contents = Pick<DepotContents, 'root' | 'binaries' | 'strays' | 'temps'>;

/** What the depot holds by its catalog; a tree of ESX depots alone (a site that patches hosts only) has no PROD/ and none of it. */
async function contentsOf(dir: string): Promise<Contents> {
  const root = resolve(dir);
  if (!(await isDirectory(join(root, DEPOT_ROOT_DIR))) && (await readTreeEsx(root)).depots.length > 0) return { root, binaries: [], strays: [], temps: [] };
  return readDepotContents(dir);
}

/** Holds the lock of each folder in turn (the depot's, then each ESX depot's, which esx mirror takes), then runs `work`. */
async function withLocks<T>(roots: readonly string[], work: (lock: DepotLock) => Promise<T>, first?: DepotLock): Promise<T> {
  if (roots.length === 0) return work(first!);
  return withDepotLock(roots[0]!, 'depot prune', (lock) => withLocks(roots.slice(1), work, first ?? lock));
}

/**
 * What a depot (or a tree of ESX depots alone) holds that its catalog no longer names, VIBs of its ESX depots
 * that no metadata lists, and temporary files of killed runs: listed, and removed only when `yes`, holding the depot's lock
 * (a temporary file of a run under way is not a killed run's). The catalog
 * decides, so a newer catalog that still names an older release's binaries
 * keeps them.
 */
export async function pruneDepot(dir: string, options: { yes?: boolean } = {}): Promise<PruneReport> {
  if (!options.yes) {
    const inventory = await contentsOf(dir);
    const candidates = candidatesOf(inventory, await readTreeEsx(inventory.root));
    return { depot: inventory.root, removed: false, candidates, bytes: candidates.reduce((s, c) => s + c.size, 0) };
  }
  // The depot is checked before the lock is taken: a folder that is not a depot gets no lock file.
  const root = (await contentsOf(dir)).root;
  // While a mirror writes an ESX depot its new VIBs are not listed yet: prune waits for it.
  const esxFolders = (await readTreeEsx(root)).depots.map((d) => join(root, d.folder));
  return withLocks([resolve(root), ...esxFolders], async (lock) => {
    const inventory = await contentsOf(root);
    const candidates = candidatesOf(inventory, await readTreeEsx(root));
    for (const c of candidates) {
      try {
        await rm(join(inventory.root, c.path), { force: true });
      } catch (err) {
        throw describeFsError(err, join(inventory.root, c.path));
      }
    }
    return {
      depot: inventory.root,
      removed: true,
      candidates,
      bytes: candidates.reduce((s, c) => s + c.size, 0),
      lock: lock.tookOverFrom ? { tookOverFrom: lock.tookOverFrom } : {},
    };
  });
}
