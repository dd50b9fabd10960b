import type { AuthLimits } from './auth.js';
import { SERVE_AUTH_FAILURE_BURST, SERVE_AUTH_FAILURE_REFILL_MS } from './tuning.js';

/**
 * A client's budget of failed password checks is the server's, not each process's: every one of `count`
 * processes gets its share (the burst divided, the refill as much slower), so that whichever process the
 * kernel hands each connection to, the server as a whole allows no more failures than one process would.
 */
export function failureShare(limits: AuthLimits | undefined, count: number): AuthLimits {
  const burst = limits?.failures ?? SERVE_AUTH_FAILURE_BURST;
  const refillMs = limits?.refillMs ?? SERVE_AUTH_FAILURE_REFILL_MS;
  return { ...limits, failures: Math.max(1, Math.floor(burst / count)), refillMs: refillMs * count };
}
