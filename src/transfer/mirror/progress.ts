import type { Readable } from 'node:stream';
import { formatBytes } from '../../util/text.js';

/** Checks per window: the speed is judged over the last window, to a quarter of it. */
const TICKS = 4;

/** A transfer that went slower than the slowest speed allowed over the whole window. */
export class StallError extends Error {}

/**
 * The progress rule, as curl's --speed-limit and --speed-time: a transfer
 * that brought fewer than `minBytesPerSecond` × the window's seconds in the
 * last window fails, however regularly its bytes trickle in (the idle timeout
 * alone lets a server drip a byte every few seconds for ever). One watch
 * spans every attempt at a file, so retries do not restart the clock.
 */
export class ProgressWatch {
  private total = 0;
  private readonly samples: number[] = [0];
  private readonly timer: NodeJS.Timeout;
  private readonly bodies = new Set<Readable>();
  private readonly minBytes: number;
  private readonly abort = new AbortController();
  stalled?: StallError;
  /** Aborted on a stall: a request still waiting for its answer ends too. */
  readonly signal: AbortSignal = this.abort.signal;

  constructor(
    private readonly windowMs: number,
    minBytesPerSecond: number,
  ) {
    this.minBytes = Math.ceil((minBytesPerSecond * windowMs) / 1000);
    this.timer = setInterval(() => this.tick(), Math.max(1, Math.round(windowMs / TICKS)));
    // The requests keep the process alive; the watch alone must not.
    this.timer.unref();
  }

  add(n: number): void {
    this.total += n;
  }

  private tick(): void {
    this.samples.push(this.total);
    if (this.samples.length <= TICKS) return;
    this.samples.shift();
    const recent = this.total - this.samples[0]!;
    if (recent >= this.minBytes) return;
    this.stalled = new StallError(
      `${formatBytes(recent)} arrived in the last ${this.windowMs / 1000} s, less than the ${formatBytes(this.minBytes)} (${formatBytes(this.minBytes / (this.windowMs / 1000))}/s) a transfer must keep up`,
    );
    for (const body of this.bodies) body.destroy(this.stalled);
    this.abort.abort(this.stalled);
    this.stop();
  }

  /** Ends `body` with the stall when it happens; returns the release. */
  guard(body: Readable): () => void {
    if (this.stalled) body.destroy(this.stalled);
    this.bodies.add(body);
    return () => this.bodies.delete(body);
  }

  /** Throws the stall, if the transfer stalled. */
  check(): void {
    if (this.stalled) throw this.stalled;
  }

  stop(): void {
    clearInterval(this.timer);
    this.bodies.clear();
  }
}
