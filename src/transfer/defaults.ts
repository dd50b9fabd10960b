/** What a mirror does unless told otherwise; the CLI shows these as its defaults (kept apart so it need not load the mirror). */
export const MIRROR_DEFAULTS = {
  /** Binaries downloaded at once. */
  concurrency: 4,
  /** Idle time allowed for an answer or between its bytes. */
  timeoutMs: 60_000,
} as const;
