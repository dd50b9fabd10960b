import { rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { MIRROR_PARTIAL_TAG, TEMP_PREFIX } from '../constants.js';
import { describeFsError } from '../util/errors.js';
import { inventoryDepot } from './inventory.js';

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
}

/**
 * What a depot holds that its catalog no longer names, and temporary files of
 * killed runs: listed, and removed only when `yes`. The catalog decides, so a
 * newer catalog that still names an older release's binaries keeps them.
 */
export async function pruneDepot(dir: string, options: { yes?: boolean } = {}): Promise<PruneReport> {
  const inventory = await inventoryDepot(dir);
  const candidates: PruneCandidate[] = [
    ...inventory.strays.map((s) => ({ ...s, kind: 'stale' as const })),
    ...inventory.temps.map((t) => ({
      ...t,
      kind: basename(t.path).startsWith(`${TEMP_PREFIX}${MIRROR_PARTIAL_TAG}`) ? ('partial' as const) : ('temporary' as const),
    })),
  ].sort((a, b) => a.path.localeCompare(b.path));
  if (options.yes) {
    for (const c of candidates) {
      try {
        await rm(join(inventory.root, c.path), { force: true });
      } catch (err) {
        throw describeFsError(err, join(inventory.root, c.path));
      }
    }
  }
  return { depot: inventory.root, removed: options.yes ?? false, candidates, bytes: candidates.reduce((s, c) => s + c.size, 0) };
}
