import { constants as fsConstants, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { DepotkitError, describeFsError, usageError } from './errors.js';

/** What a file that is not a regular file is, in words. */
export function fileKind(info: Stats): string {
  if (info.isSymbolicLink()) return 'a symbolic link';
  if (info.isDirectory()) return 'a folder';
  if (info.isFIFO()) return 'a FIFO';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  if (info.isSocket()) return 'a socket';
  return 'not a file';
}

export interface BoundedReadOptions {
  /** Refuse a symbolic link at `path` itself, as for a file only depotkit writes (a lock): one swapped in is not followed. */
  noFollow?: boolean;
}

/**
 * Reads at most `maxBytes` of `path`, which must be a regular file, and refuses anything else with one
 * sentence (`what` names it): a device such as /dev/zero, a FIFO that never ends or has no writer, or a
 * huge file given by mistake is never read whole, nor waited on. Opened with O_NONBLOCK, so that a FIFO
 * does not block the open, and judged on the open handle, so that what was judged is what is read.
 */
export async function readFileBounded(path: string, maxBytes: number, what = 'file', options: BoundedReadOptions = {}): Promise<Buffer> {
  // In chunks, not one buffer of the limit: a 2 KiB PEM read a thousand times must not allocate 4 MiB each time.
  const chunks: Buffer[] = [];
  let total = 0;
  const flags = fsConstants.O_RDONLY | fsConstants.O_NONBLOCK | (options.noFollow ? fsConstants.O_NOFOLLOW : 0);
  let handle;
  try {
    handle = await open(path, flags);
  } catch (err) {
    if (options.noFollow && (err as NodeJS.ErrnoException).code === 'ELOOP') throw notRegular(path, 'a symbolic link', what);
    throw describeFsError(err, path);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw notRegular(path, fileKind(info), what);
    if (info.size > maxBytes) throw tooLarge(path, maxBytes, what);
    while (total <= maxBytes) {
      const chunk = Buffer.allocUnsafe(Math.min(BOUNDED_READ_CHUNK, maxBytes + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
    }
  } catch (err) {
    throw err instanceof DepotkitError ? err : describeFsError(err, path);
  } finally {
    await handle.close();
  }
  // A file that grew while it was read.
  if (total > maxBytes) throw tooLarge(path, maxBytes, what);
  return Buffer.concat(chunks, total);
}

const BOUNDED_READ_CHUNK = 64 * 1024;

function notRegular(path: string, kind: string, what: string): DepotkitError {
  return usageError(`${path} is ${kind}, not a regular file: it is not a ${what}.`);
}

function tooLarge(path: string, maxBytes: number, what: string): DepotkitError {
  return usageError(`${path} is larger than ${formatLimit(maxBytes)}: it is not a ${what}.`);
}

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
