import type { MgmtApiGeneration } from '../constants.js';

/** `--api`: a generation, or `auto` for the newer one when the server has it. Kept light for the CLI. */
export type ApiChoice = 'auto' | MgmtApiGeneration;
export const API_CHOICES: readonly ApiChoice[] = ['auto', 'rest', 'api'];

/** What a replacement does unless told otherwise; the CLI shows these as its defaults. */
export const REPLACE_DEFAULTS = {
  /** How long to wait for the restarted server to serve the new certificate. */
  waitTimeoutMs: 15 * 60_000,
} as const;
