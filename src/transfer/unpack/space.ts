import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureSpace } from '../../util/space.js';
import type { PackManifest } from '../format.js';

/**
 * The bytes an unpack will write into `root`: every file the pack carries
 * (flagged binaries are never placed) that is not already there with its size.
 * A file of the right size is counted as kept: whether its content is right is
 * found later, and over-counting would refuse unpacks that fit.
 */
export async function unpackBytesToWrite(root: string, manifest: PackManifest): Promise<number> {
  let needed = 0;
  for (const file of manifest.files) {
    if (file.catalogMismatch) continue;
    const info = await stat(join(root, file.path)).catch(() => undefined);
    if (!info?.isFile() || info.size !== file.size) needed += file.size;
  }
  return needed;
}

/** Stops the unpack before the lock is taken or anything written when what it will write does not fit. */
export async function ensureUnpackSpace(root: string, manifest: PackManifest): Promise<void> {
  await ensureSpace(root, await unpackBytesToWrite(root, manifest), 'The unpack');
}
