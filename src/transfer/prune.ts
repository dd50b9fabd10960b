import { rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { MIRROR_PARTIAL_TAG, TEMP_PREFIX } from '../constants.js';
import { type DepotLockHolder, withDepotLock } from '../depot/lock.js';
import { describeFsError } from '../util/errors.js';
import { type DepotContents, readDepotContents } from './contents.js';

export interface PruneCandidate {
  path: string;
  size: number;
  /** `stale`: a file in a component folder the catalog does not name; `temporary`: left by a killed run; `partial`: a mirror's interrupted download. */
  kind: 'stale' | 'temporary' | 'partial';
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

function candidatesOf(inventory: DepotContents): PruneCandidate[] {
  // Whatever its name looks like, a file the catalog names is the depot's (the inventory counts it so; checked again here).
  const named = new Set(inventory.binaries.map((b) => b.path));
  return [
    ...inventory.strays.map((s) => ({ ...s, kind: 'stale' as const })),
    ...inventory.temps.map((t) => ({
      ...t,
      kind: basename(t.path).startsWith(`${TEMP_PREFIX}${MIRROR_PARTIAL_TAG}`) ? ('partial' as const) : ('temporary' as const),
    })),
  ]
    .filter((c) => !named.has(c.path))
    .sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * What a depot holds that its catalog no longer names, and temporary files of
 * killed runs: listed, and removed only when `yes`, holding the depot's lock
 * (a temporary file of a run under way is not a killed run's). The catalog
 * decides, so a newer catalog that still names an older release's binaries
 * keeps them.
 */
export async function pruneDepot(dir: string, options: { yes?: boolean } = {}): Promise<PruneReport> {
  if (!options.yes) {
    const inventory = await readDepotContents(dir);
    const candidates = candidatesOf(inventory);
    return { depot: inventory.root, removed: false, candidates, bytes: candidates.reduce((s, c) => s + c.size, 0) };
  }
  // The depot is checked before the lock is taken: a folder that is not a depot gets no lock file.
  const root = (await readDepotContents(dir)).root;
  return withDepotLock(resolve(root), 'depot prune', async (lock) => {
    const inventory = await readDepotContents(root);
    const candidates = candidatesOf(inventory);
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
