import { SERVE_RESPAWN_FIRST_DELAY_MS, SERVE_RESPAWN_MAX_DELAY_MS, SERVE_WORKER_STABLE_MS } from './tuning.js';

/**
 * How long to wait before replacing the `n`th worker in a row that died young: at once for the first,
 * then 1 s, doubling, at most SERVE_RESPAWN_MAX_DELAY_MS. Without it a worker that cannot start (the
 * root gone, a file it cannot read) was forked again every ~110 ms.
 */
export function respawnDelayMs(n: number): number {
  if (n <= 1) return 0;
  return Math.min(SERVE_RESPAWN_MAX_DELAY_MS, SERVE_RESPAWN_FIRST_DELAY_MS * 2 ** (n - 2));
}

/**
 * Replaces workers that die, after a delay that grows while they keep dying young (respawnDelayMs); why
 * they die is said once, and that one serves again once it does.
 */
export class RespawnPolicy {
  // Workers that died young in a row; reset by one that served for SERVE_WORKER_STABLE_MS.
  private failures = 0;
  // What was last said about a dying worker: the same reason is said once, not at every attempt.
  private lastReason: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  /** `start` forks a worker and resolves once it serves; a failure of it is said by that worker's death. */
  constructor(private readonly start: () => Promise<void>) {}

  /** The worker `pid` died (`why`) after serving for `servedMs` (0: it never served): another is started. */
  died(pid: number | undefined, why: string, servedMs: number): void {
    if (servedMs >= SERVE_WORKER_STABLE_MS) this.failures = 0;
    this.failures++;
    const delay = respawnDelayMs(this.failures);
    if (why !== this.lastReason) {
      this.lastReason = why;
      const when = delay === 0 ? 'starting another' : `starting another in ${delay / 1000} s`;
      const more =
        this.failures > 1 ? `; while workers keep dying, each wait doubles (up to ${SERVE_RESPAWN_MAX_DELAY_MS / 1000} s) and this is not repeated` : '';
      process.stderr.write(`depotkit: a server worker (pid ${pid}) ${why}; ${when}${more}. The other serving processes go on.\n`);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.stopped) return;
      this.start().then(
        () => {
          if (this.lastReason !== undefined && this.failures > 1) process.stderr.write('depotkit: a server worker is serving again.\n');
          this.lastReason = undefined;
        },
        // Said by the exit handler of that worker, which also schedules the next attempt.
        () => {},
      );
    }, delay);
  }

  /** No worker is started any more (the server stops). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
