import type { ChildProcess } from 'node:child_process';
import { usageError } from '../util/errors.js';
import { failureShare } from './failure-budget.js';
import { WorkerPool } from './worker-pool.js';
import { startDepotServer } from './index.js';
import { MetricsGatherer } from './metrics-gather.js';
import { checkTlsMaterial, loadTlsMaterial, type TlsMaterial } from './tls.js';
import type { DepotServer, DepotServerOptions } from './types.js';

export { failureShare } from './failure-budget.js';

export interface RunningDepot {
  url: string;
  port: number;
  /** Serving processes, this one included. */
  workers: number;
  /** New certificate and key (or the files re-read) for every serving process, open connections staying; and a new look at the depot. */
  reload(material?: TlsMaterial): Promise<void>;
  /** Every serving process opens its access log file again at its path (logrotate renamed it). */
  reopenLog(): Promise<void>;
  /** Looks at the depot again for the status page (reload() does it too, whatever becomes of the certificate). */
  refreshStatus(): Promise<void>;
  /** Stops accepting, lets running downloads finish for up to `graceMs`, then ends. */
  close(graceMs: number): Promise<void>;
}

/**
 * Runs `count` server processes on one listening socket: this process opens
 * it and serves, and hands it to `count - 1` forked workers that accept on it
 * too (the kernel gives each connection to whichever process accepts first),
 * so the TLS work of concurrent downloads spreads over every core and no
 * process only supervises. `count` 1 forks nothing. A worker that dies is
 * replaced while the server is not shutting down (worker-pool.ts, respawn.ts).
 */
export async function startDepot(startOptions: DepotServerOptions, count: number, graceMs: number): Promise<RunningDepot> {
  const options: DepotServerOptions = { ...startOptions, authLimits: failureShare(startOptions.authLimits, count) };
  const live = new Set<ChildProcess>();
  const metrics = new MetricsGatherer(live);
  // The primary looks at the depot (at start and on reload) and hands what it saw to every worker.
  const server = await startDepotServer(options, { collectMetrics: (own) => metrics.collect([own]) });
  const pool = new WorkerPool(server, live, metrics, options, graceMs, await server.status());
  // However the primary ends (a second Ctrl-C exits at once), no worker outlives it.
  process.once('exit', () => pool.kill('SIGKILL'));
  try {
    await pool.start(count - 1);
  } catch (err) {
    await server.close();
    throw err;
  }
  return {
    url: server.url,
    port: server.port,
    workers: count,
    reload: (given) => reloadAll(server, pool, given),
    async refreshStatus() {
      await server.refreshStatus();
      await pool.pushStatus();
    },
    async reopenLog() {
      const replies = pool.ask({ type: 'reopen-log' }, 'log-reopened');
      throwFirst(await Promise.all([errorOf(server.reopenLog()), ...replies]));
    },
    async close(ms) {
      await Promise.all([server.close(ms), pool.stop(ms)]);
    },
  };
}

/** The new certificate and key, or the files re-read, for every serving process; and every process shows the depot as it is now. */
async function reloadAll(server: DepotServer, pool: WorkerPool, given: TlsMaterial | undefined): Promise<void> {
  let ownReloaded = false;
  try {
    // Read and checked once, here, before any process switches: a broken pair leaves every one on the old pair,
    // and every process gets the very same new one (a worker does not re-read files that may change meanwhile).
    const tls = pool.options.tls;
    const material = given ? checkTlsMaterial(given) : tls ? await loadTlsMaterial(tls) : undefined;
    // A worker started from now on (one replacing a worker that dies meanwhile) starts with the new pair, and one
    // already starting is handed it once it serves (WorkerPool.spawn): none is left on the previous certificate.
    if (material) pool.options = { ...pool.options, tls: material };
    const replies = pool.ask({ type: 'reload', material }, 'reloaded');
    // This process serves too, so it reloads like its workers (and looks at the depot again).
    ownReloaded = true;
    const [ownError, ...workerErrors] = await Promise.all([errorOf(server.reloadTls(material)), ...replies]);
    throwFirst([ownError, ...workerErrors]);
    // A worker that was starting (replacing one that died) may have answered before it served: done once it serves the new pair.
    await pool.startsSettled();
  } finally {
    // Whatever became of the certificate, every process shows the depot as it is now.
    if (!ownReloaded) await server.refreshStatus().catch(() => {});
    await pool.pushStatus();
  }
}

/** The message of the error `step` ends with, or undefined when it succeeds. */
function errorOf(step: Promise<void>): Promise<string | undefined> {
  return step.then(
    () => undefined,
    (err: Error) => err.message,
  );
}

/** The first of the errors the serving processes report, as a usage error. */
function throwFirst(errors: (string | undefined)[]): void {
  const first = errors.find((e): e is string => e !== undefined);
  if (first !== undefined) throw usageError(first);
}
