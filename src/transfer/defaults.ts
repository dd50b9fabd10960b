/** What a mirror does unless told otherwise; the CLI shows these as its defaults (kept apart so it need not load the mirror). */
export const MIRROR_DEFAULTS = {
  /** Binaries downloaded at once. */
  concurrency: 4,
  /** Idle time allowed for an answer or between its bytes; also the span over which the slowest speed is judged. */
  timeoutMs: 60_000,
  /**
   * The slowest average speed of a download over the timeout (curl's
   * --speed-limit over --speed-time): a server that drips a byte every few
   * seconds never trips the idle timeout, but fails this within the timeout.
   */
  minBytesPerSecond: 1024,
  /** Attempts after a network failure or a 5xx answer, each resuming where the last stopped. */
  retries: 3,
} as const;
