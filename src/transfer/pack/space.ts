import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureSpace } from '../../util/space.js';
import type { PlannedVolume } from '../format.js';

/**
 * Stops the pack before anything is written when its volumes do not fit in
 * `out`: their planned sizes (headers and padding included) against the free
 * space, with the room of an earlier pack's files that `force` removes first.
 * The manifest and the lists beside it are small and left out of the sum.
 */
export async function ensurePackSpace(out: string, volumes: readonly PlannedVolume[], replaced: readonly string[]): Promise<void> {
  const needed = volumes.reduce((sum, v) => sum + v.size, 0);
  let freed = 0;
  for (const name of replaced) {
    const info = await lstat(join(out, name)).catch(() => undefined);
    if (info?.isFile()) freed += info.size;
  }
  await ensureSpace(out, needed, 'The pack', freed);
}
