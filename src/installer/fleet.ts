import pLimit from 'p-limit';
import { DepotkitError, errorMessage } from '../util/errors.js';
import { InstallerApiError, InstallerConnectionError } from './client.js';
import type { InstallerTarget } from './inventory.js';

/** One installer's result in a fleet run. */
export interface FleetRow<T> {
  name: string;
  url: string;
  ok: boolean;
  result?: T;
  error?: { message: string; errorCode?: string; remediation?: string; hint?: string };
  ms: number;
}

/**
 * Runs `task` on every installer, at most `concurrency` at a time; one
 * installer's failure never stops the others. Rows come back in inventory order.
 */
export async function runFleet<T>(
  targets: InstallerTarget[],
  concurrency: number,
  task: (target: InstallerTarget) => Promise<{ ok: boolean; result: T }>,
  onRow?: (row: FleetRow<T>) => void,
): Promise<Array<FleetRow<T>>> {
  const limit = pLimit(Math.max(1, concurrency));
  return Promise.all(
    targets.map((target) =>
      limit(async () => {
        const started = Date.now();
        let row: FleetRow<T>;
        try {
          const { ok, result } = await task(target);
          row = { name: target.name, url: target.url, ok, result, ms: Date.now() - started };
        } catch (err) {
          row = { name: target.name, url: target.url, ok: false, error: describe(err), ms: Date.now() - started };
        }
        onRow?.(row);
        return row;
      }),
    ),
  );
}

function describe(err: unknown): NonNullable<FleetRow<unknown>['error']> {
  if (err instanceof InstallerApiError) return { message: err.message, errorCode: err.errorCode, remediation: err.remediation };
  if (err instanceof InstallerConnectionError || err instanceof DepotkitError) return { message: err.message, ...(err.hint ? { hint: err.hint } : {}) };
  return { message: errorMessage(err) };
}
