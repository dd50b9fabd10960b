import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Checkpoints } from '../../depot/place.js';
import { sha256Files } from '../../util/hash.js';
import type { MirroredFile } from './download.js';
import { partialPathFor } from './local.js';
import { eachLimited } from '../../util/limit.js';

/** File system calls at once while looking at what is here: enough to hide their latency, few enough to stay small. */
const LOOKUPS_AT_ONCE = 16;
/** Files hashed per batch of worker threads. */
const HASH_BATCH = 1024;

export interface BinaryPlan {
  /** Indices into the catalog's binaries of those to download, the largest first. */
  todo: number[];
  /** Bytes still to download (what partial downloads hold counted as here). */
  bytesToFetch: number;
}

const sizeOf = (path: string) =>
  lstat(path).then(
    (s) => (s.isFile() ? s.size : undefined),
    () => undefined,
  );

/**
 * What is here already: remembered as verified, or of the right size and
 * then hashed once (and remembered); the rest is to download. Works through
 * the catalog a few files at a time, keeping only indices, so that memory
 * stays small however many binaries the catalog names.
 */
export async function planBinaries<B extends MirroredFile>(
  root: string,
  binaries: readonly B[],
  checkpoints: Checkpoints,
  seen: { inPlace(b: B): void; hashed(bytes: number): void },
): Promise<BinaryPlan> {
  const todo: number[] = [];
  const toHash: number[] = [];
  await eachLimited(binaries.keys(), LOOKUPS_AT_ONCE, async (i) => {
    const b = binaries[i]!;
    const path = join(root, b.path);
    if (await checkpoints.state.matches(path, b.checksum)) seen.inPlace(b);
    else if ((await sizeOf(path)) === b.size) toHash.push(i);
    else todo.push(i);
  });
  for (let start = 0; start < toHash.length; start += HASH_BATCH) {
    const batch = toHash.slice(start, start + HASH_BATCH);
    const results = await sha256Files(batch.map((i) => join(root, binaries[i]!.path)));
    for (const [k, r] of results.entries()) {
      const b = binaries[batch[k]!]!;
      seen.hashed(b.size);
      if (r.sha256 !== b.checksum) {
        todo.push(batch[k]!);
        continue;
      }
      await checkpoints.state.remember(r.path, b.checksum);
      seen.inPlace(b);
    }
    await checkpoints.maybeSave();
  }
  if (toHash.length) await checkpoints.save();
  let bytesToFetch = 0;
  await eachLimited(todo.values(), LOOKUPS_AT_ONCE, async (i) => {
    const b = binaries[i]!;
    const partial = (await sizeOf(partialPathFor(root, b))) ?? 0;
    // Added after the await: `bytesToFetch += await ...` adds to the value read before it, and the lookups at once lost each other's sums.
    bytesToFetch += b.size - Math.min(partial, b.size);
  });
  // Largest first, so that the last minutes are not one big file on one connection.
  todo.sort((i, j) => binaries[j]!.size - binaries[i]!.size || (binaries[i]!.path < binaries[j]!.path ? -1 : 1));
  return { todo, bytesToFetch };
}
