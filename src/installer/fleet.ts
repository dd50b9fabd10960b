import { limiter } from '../util/limit.js';
import { DepotkitError, errorMessage } from '../util/errors.js';
import { InstallerApiError, InstallerConnectionError } from './client.js';
import type { InstallerTarget } from './inventory.js';

/** What a consumer says it is (appliance-info), as far as it was read. */
export interface ConsumerIdentity {
  role?: string;
  version?: string;
}

/** One consumer's result in a run: which consumer, what it says it is, and its result or error. */
export interface FleetRow<T> {
  name: string;
  url: string;
  /** The role appliance-info answers (VcfInstaller, SddcManager); absent when it was never read. */
  role?: string;
  version?: string;
  ok: boolean;
  result?: T;
  error?: { message: string; errorCode?: string; fix?: string };
  ms: number;
}

/**
 * Runs `task` on every consumer, at most `concurrency` at a time; one
 * consumer's failure never stops the others. What the task learns of the
 * consumer's identity (it fills `seen`) goes in the row, failed or not.
 * Rows come back in inventory order.
 */
export async function runFleet<T>(
  targets: InstallerTarget[],
  concurrency: number,
  task: (target: InstallerTarget, seen: ConsumerIdentity) => Promise<{ ok: boolean; result: T }>,
  onRow?: (row: FleetRow<T>) => void,
): Promise<Array<FleetRow<T>>> {
  const limit = limiter(concurrency);
  return Promise.all(
    targets.map((target) =>
      limit(async () => {
        const started = Date.now();
        const seen: ConsumerIdentity = {};
        let outcome: Pick<FleetRow<T>, 'ok' | 'result' | 'error'>;
        try {
          const { ok, result } = await task(target, seen);
          outcome = { ok, result };
        } catch (err) {
          outcome = { ok: false, error: describe(err) };
        }
        const identity = { ...(seen.role !== undefined ? { role: seen.role } : {}), ...(seen.version !== undefined ? { version: seen.version } : {}) };
        const row: FleetRow<T> = { name: target.name, url: target.url, ...identity, ...outcome, ms: Date.now() - started };
        onRow?.(row);
        return row;
      }),
    ),
  );
}

function describe(err: unknown): NonNullable<FleetRow<unknown>['error']> {
  if (err instanceof InstallerApiError) return { message: err.message, errorCode: err.errorCode, ...(err.fix ? { fix: err.fix } : {}) };
  if (err instanceof InstallerConnectionError || err instanceof DepotkitError) return { message: err.message, ...(err.fix ? { fix: err.fix } : {}) };
  return { message: errorMessage(err) };
}
