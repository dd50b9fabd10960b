/** What a check does unless told otherwise; the CLI shows these as its defaults (kept apart so it need not load the probe). */
export const CHECK_DEFAULTS = {
  /** Connect and handshake timeout. */
  timeoutMs: 10_000,
  /** Requests in flight at once. */
  concurrency: 16,
  /** Binaries downloaded and hashed at once with `deep` (at most `concurrency`). */
  hashConcurrency: 4,
} as const;
