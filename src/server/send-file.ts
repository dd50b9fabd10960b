import { close } from 'node:fs';
import type { ServerResponse } from 'node:http';
import type { FileReads } from './file-reads.js';

/**
 * Sends bytes `start`..`end` (inclusive) of the open file `fd` as the body of
 * `res`, then closes `fd`. Two buffers of `bufferSize` per response are
 * reused for the whole file: one is read into while the other is being
 * written, and a buffer is read into again only once its write has completed
 * (that is the back-pressure). Streams that allocate a new buffer per chunk
 * left about twice the memory per slow client, waiting for the garbage
 * collector. A client that goes away ends the loop and the descriptor is
 * closed as soon as the read in progress returns. `reads` decides where each read runs (file-reads.ts).
 */
export function sendFileRange(
  fd: number,
  start: number,
  end: number,
  res: ServerResponse,
  bufferSize: number,
  reads: FileReads,
  onBytes: (n: number) => void,
): void {
  const size = Math.max(1, Math.min(bufferSize, end - start + 1));
  const buffers = [Buffer.allocUnsafeSlow(size), Buffer.allocUnsafeSlow(size)];
  const writes: Promise<void>[] = [Promise.resolve(), Promise.resolve()];
  let gone = false;
  const goneSignal = new Promise<void>((resolve) =>
    res.once('close', () => {
      gone = true;
      resolve();
    }),
  );
  async function pump(): Promise<boolean> {
    let position = start;
    let turn = 0;
    while (position <= end) {
      // A write callback never comes once the connection is gone: wait for either.
      await Promise.race([writes[turn], goneSignal]);
      if (gone) return false;
      const buf = buffers[turn]!;
      const n = await reads.read(fd, buf, Math.min(size, end - position + 1), position);
      if (gone) return false;
      // The file shrank under us: the promised length cannot be sent, so the response is cut.
      if (n === 0) return false;
      position += n;
      onBytes(n);
      writes[turn] = new Promise<void>((resolve) => res.write(n === size ? buf : buf.subarray(0, n), () => resolve()));
      turn ^= 1;
    }
    return true;
  }

  pump().then(
    (complete) => {
      close(fd, () => {});
      if (complete) res.end();
      else if (!gone) res.destroy();
    },
    () => {
      close(fd, () => {});
      res.destroy();
    },
  );
}
