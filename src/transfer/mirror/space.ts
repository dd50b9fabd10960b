import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { CatalogBinary } from '../../depot/catalog.js';
import { ensureSpace } from '../../util/space.js';
import { partialPathFor } from './local.js';
import { eachLimited } from '../../util/limit.js';

/** File system calls at once while adding up: as the plan of what to download looks. */
const LOOKUPS_AT_ONCE = 16;

const sizeOf = (path: string) =>
  lstat(path).then(
    (s) => (s.isFile() ? s.size : undefined),
    () => undefined,
  );

/**
 * The bytes a mirror will write into `root`: the catalog, and each binary to
 * mirror that is not already there with its size, less what its partial
 * download holds. A file of the right size is counted as kept (whether its
 * content is right is found later; over-counting would refuse mirrors that
 * fit); the other metadata is small and its size unknown until fetched.
 */
export async function mirrorBytesToWrite(root: string, binaries: readonly CatalogBinary[], catalogBytes: number): Promise<number> {
  let needed = catalogBytes;
  await eachLimited(binaries.values(), LOOKUPS_AT_ONCE, async (b) => {
    if ((await sizeOf(join(root, b.path))) === b.size) return;
    const partial = (await sizeOf(partialPathFor(root, b))) ?? 0;
    // Added after the await: `needed += await ...` would add to the value read before it, losing the other lookups' sums.
    needed += b.size - Math.min(partial, b.size);
  });
  return needed;
}

/** Stops the mirror before the lock is taken or anything written when what it will download does not fit. */
export async function ensureMirrorSpace(root: string, binaries: readonly CatalogBinary[], catalogBytes: number): Promise<void> {
  await ensureSpace(root, await mirrorBytesToWrite(root, binaries, catalogBytes), 'The mirror');
}
