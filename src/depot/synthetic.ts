import { createHash, randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { describeFsError } from '../util/errors.js';
import { tempPathFor } from '../util/fs.js';

const BLOCK = 4 << 20;

/**
 * Writes `size` bytes of synthetic, incompressible content at `path` (through a
 * temporary name) and returns its SHA-256. One random block is reused with the
 * block number stamped in front, so gigabytes are generated at disk speed and
 * no two blocks are equal.
 */
export async function writeSyntheticFile(path: string, size: number, onBytes?: (n: number) => void): Promise<string> {
  const block = randomBytes(Math.min(BLOCK, Math.max(size, 1)));
  const hash = createHash('sha256');
  const temp = tempPathFor(path);
  try {
    const handle = await open(temp, 'wx', 0o644);
    try {
      let written = 0;
      for (let index = 0; written < size; index++) {
        const length = Math.min(block.length, size - written);
        if (length >= 8) block.writeBigUInt64BE(BigInt(index), 0);
        const chunk = block.subarray(0, length);
        hash.update(chunk);
        await handle.write(chunk, 0, length);
        written += length;
        onBytes?.(length);
      }
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw describeFsError(err, path);
  }
  return hash.digest('hex');
}
