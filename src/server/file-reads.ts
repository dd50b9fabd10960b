import { read, readSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { SERVE_SLOW_READ_SPAN } from './tuning.js';

/** When a serving process reads a file in its event loop and when through libuv's thread pool. */
export interface FileReadPolicy {
  /**
   * A read in the event loop that took at least this many milliseconds while the process slept (the disk, not
   * the page cache) is a slow one; 0: every read in the loop is.
   */
  loopBoundMs: number;
  /** Two slow reads close together send the process's reads to the pool for this many milliseconds; then the loop again. */
  poolMs: number;
}

/**
 * The file reads of one serving process. A read from the page cache is a copy: done in the event loop it costs
 * that copy, while a read handed to libuv's pool costs a thread hand-over each way as well (a futex wait and
 * wake-up: 1 GiB from the page cache in 256 KiB reads took 0.19 CPU s/GiB in the loop and 0.28 to 0.31 through the
 * pool at load 11, against nginx's 0.7 for a whole download; more on a busier machine: docs/benchmarks.md).
 * A read that has to wait for the disk stops every connection of the process meanwhile, so each read in the loop
 * is timed, and a second slow one within SERVE_SLOW_READ_SPAN reads sends every read of this process to the pool
 * for `poolMs`: a cold disk stops the loop for two reads at most per `poolMs`.
 *
 * A read counts only when the process slept during it (its voluntary context switches rose): on a loaded machine a
 * read from the page cache often takes milliseconds because the scheduler ran something else meanwhile, an
 * involuntary switch. The count is the process's, not the thread's (Node 20 has no per-thread figure), so another
 * thread's sleep makes a preempted read look slow now and then (one in ten at load 10 on 2 cores): hence two.
 */
export class FileReads {
  private poolUntil = 0;
  private loopReads = 0;
  private lastSlow = -Infinity;

  /** `onSlow`: told of each slow read. */
  constructor(
    private readonly policy: FileReadPolicy,
    private readonly onSlow: () => void = () => {},
  ) {}

  /** Reads up to `length` bytes at `position` of `fd` into the start of `buf`; the bytes read. */
  read(fd: number, buf: Buffer, length: number, position: number): number | Promise<number> {
    const start = performance.now();
    if (start < this.poolUntil) return readInPool(fd, buf, length, position);
    const bound = this.policy.loopBoundMs;
    // About 3 microseconds, against tens for a 256 KiB read from the page cache.
    const slept = process.resourceUsage().voluntaryContextSwitches;
    const n = readSync(fd, buf, 0, length, position);
    const end = performance.now();
    this.loopReads++;
    if (end - start >= bound && (bound === 0 || process.resourceUsage().voluntaryContextSwitches > slept)) {
      this.onSlow();
      if (this.loopReads - this.lastSlow <= SERVE_SLOW_READ_SPAN) this.poolUntil = end + this.policy.poolMs;
      this.lastSlow = this.loopReads;
    }
    return n;
  }
}

function readInPool(fd: number, buf: Buffer, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => read(fd, buf, 0, length, position, (err, n) => (err ? reject(err) : resolve(n))));
}
