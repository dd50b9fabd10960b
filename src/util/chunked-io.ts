import type { FileHandle } from 'node:fs/promises';

/**
 * Chunked positional I/O for copying while hashing (build, pack, unpack,
 * mirror). Reads run one chunk ahead and writes up to a few chunks behind, on
 * libuv's threads, while the main thread hashes: the disk and the CPU work at
 * the same time, and each byte is read once.
 */

/** 4 MiB: large enough that per-call costs vanish, small enough to keep a few in flight. */
export const CHUNK_BYTES = 4 * 1024 * 1024;
const WRITES_IN_FLIGHT = 4;

/** Reads exactly `length` bytes at `position`, or fewer only at the end of the file. */
export async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done === length ? buffer : buffer.subarray(0, done);
}

/**
 * Yields `length` bytes of `handle` from `start` in chunks, the next read
 * already under way while the caller works on the current chunk. A chunk
 * shorter than asked means the file ended early; nothing follows it.
 */
export async function* readChunks(handle: FileHandle, start: number, length: number, chunkBytes = CHUNK_BYTES): AsyncGenerator<Buffer> {
  let position = start;
  const end = start + length;
  const next = () => {
    const size = Math.min(chunkBytes, end - position);
    const pending = readAt(handle, position, size);
    position += size;
    return { pending, size };
  };
  if (length <= 0) return;
  let current = next();
  for (;;) {
    const chunk = await current.pending;
    const more = position < end && chunk.length === current.size;
    const upcoming = more ? next() : undefined;
    // A read that fails while the caller works on the previous chunk surfaces at its own await.
    upcoming?.pending.catch(() => undefined);
    yield chunk;
    if (!upcoming) return;
    current = upcoming;
  }
}

/**
 * Writes buffers one after another from `position`, several in flight at
 * once (positional writes need no ordering between them). The buffers passed
 * must not be reused by the caller.
 */
export class PositionalWriter {
  private inFlight = new Set<Promise<void>>();
  private failure: unknown;

  constructor(
    private readonly handle: FileHandle,
    public position = 0,
  ) {}

  async write(data: Buffer): Promise<void> {
    if (this.failure) throw this.failure;
    if (data.length === 0) return;
    const at = this.position;
    this.position += data.length;
    const pending = this.writeAll(data, at).then(
      () => {
        this.inFlight.delete(pending);
      },
      (err: unknown) => {
        this.inFlight.delete(pending);
        this.failure ??= err;
      },
    );
    this.inFlight.add(pending);
    if (this.inFlight.size >= WRITES_IN_FLIGHT) await Promise.race(this.inFlight);
    if (this.failure) throw this.failure;
  }

  private async writeAll(data: Buffer, at: number): Promise<void> {
    let done = 0;
    while (done < data.length) {
      const { bytesWritten } = await this.handle.write(data, done, data.length - done, at + done);
      done += bytesWritten;
    }
  }

  /** Waits for every write; throws the first failure. */
  async flush(): Promise<void> {
    await Promise.all(this.inFlight);
    if (this.failure) throw this.failure;
  }
}

/** Writes `buffers` in order from `position` with as few system calls as the kernel allows (no copy into one buffer). */
export async function writevAt(handle: FileHandle, buffers: readonly Buffer[], position: number): Promise<void> {
  let rest = buffers.filter((b) => b.length > 0);
  let at = position;
  while (rest.length > 0) {
    const { bytesWritten } = await handle.writev(rest, at);
    if (bytesWritten === 0) throw Object.assign(new Error('the file system took no byte of a write'), { code: 'EIO' });
    at += bytesWritten;
    // A short write (rare on a regular file): skip what went out, go on with the rest.
    let skip = bytesWritten;
    while (rest.length > 0 && skip >= rest[0]!.length) skip -= rest.shift()!.length;
    if (skip > 0) rest = [rest[0]!.subarray(skip), ...rest.slice(1)];
  }
}
