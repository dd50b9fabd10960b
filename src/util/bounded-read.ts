import { open } from 'node:fs/promises';
import { describeFsError, usageError } from './errors.js';

/**
 * Reads at most `maxBytes` of `path` and refuses a larger file with one
 * sentence (`what` names it): a device such as /dev/zero, or a huge file given
 * by mistake, is never read whole.
 */
export async function readFileBounded(path: string, maxBytes: number, what = 'file'): Promise<Buffer> {
  // In chunks, not one buffer of the limit: a 2 KiB PEM read a thousand times must not allocate 4 MiB each time.
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    const handle = await open(path, 'r');
    try {
      while (total <= maxBytes) {
        const chunk = Buffer.allocUnsafe(Math.min(BOUNDED_READ_CHUNK, maxBytes + 1 - total));
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
        if (bytesRead === 0) break;
        chunks.push(chunk.subarray(0, bytesRead));
        total += bytesRead;
      }
    } finally {
      await handle.close();
    }
  } catch (err) {
    throw describeFsError(err, path);
  }
  if (total > maxBytes) throw usageError(`${path} is larger than ${formatLimit(maxBytes)}: it is not a ${what}.`);
  return Buffer.concat(chunks, total);
}

const BOUNDED_READ_CHUNK = 64 * 1024;

/**
 * Reads the start of `path` into `buffer` until it is full, the file ends or `enough` says so, and
 * returns how many bytes it holds. A pipe or device may return less than asked: it reads on.
 */
export async function readInto(path: string, buffer: Buffer, enough: (read: Buffer) => boolean = () => false): Promise<number> {
  let length = 0;
  try {
    const handle = await open(path, 'r');
    try {
      while (length < buffer.length && !enough(buffer.subarray(0, length))) {
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
        if (bytesRead === 0) break;
        length += bytesRead;
      }
    } finally {
      await handle.close();
    }
  } catch (err) {
    throw describeFsError(err, path);
  }
  return length;
}

function formatLimit(bytes: number): string {
  return bytes % 1024 ** 2 === 0 ? `${bytes / 1024 ** 2} MiB` : bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;
}
