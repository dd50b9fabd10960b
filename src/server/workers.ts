import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { usageError } from '../util/errors.js';
import type { AuthLimits } from './auth.js';
import { startDepotServer, type DepotServer, type DepotServerOptions } from './index.js';
import { aggregateMetrics, type MetricsSnapshot } from './metrics.js';
import type { StatusData } from './status-data.js';
import { checkTlsMaterial, loadTlsMaterial, type TlsMaterial } from './tls.js';
import {
  SERVE_AUTH_FAILURE_BURST,
  SERVE_AUTH_FAILURE_REFILL_MS,
  SERVE_RESPAWN_FIRST_DELAY_MS,
  SERVE_RESPAWN_MAX_DELAY_MS,
  SERVE_WORKER_STABLE_MS,
  SERVE_WORKER_START_ATTEMPTS,
} from './tuning.js';

/**
 * Messages between the primary and its workers. A worker prepares its server on 'start' and is
 * handed the listening socket with 'listen' only once prepared (see PreparedDepotServer.listen).
 */
export type ToWorker =
  | { type: 'start'; options: DepotServerOptions; graceMs: number; status?: StatusData }
  | { type: 'listen' }
  | { type: 'reload'; material?: TlsMaterial }
  | { type: 'reopen-log' }
  | { type: 'shutdown' }
  /** The primary's latest look at the depot, for the status page. */
  | { type: 'status'; data: StatusData }
  /** Send your metrics (for a scrape that another process answers). */
  | { type: 'metrics-collect'; id: number }
  /** The answer to a worker's metrics-request: every process's metrics as Prometheus text. */
  | { type: 'metrics-text'; id: number; text: string };
export type FromWorker =
  | { type: 'ready' }
  | { type: 'prepared' }
  | { type: 'listening'; url: string; port: number }
  | { type: 'failed'; message: string }
  | { type: 'reloaded'; error?: string }
  | { type: 'log-reopened'; error?: string }
  | { type: 'metrics-snapshot'; id: number; snapshot: MetricsSnapshot }
  /** A scrape reached this worker: it sends its own metrics and asks for everyone's. */
  | { type: 'metrics-request'; id: number; snapshot: MetricsSnapshot };

/** How long a scrape waits for a serving process's metrics; one that does not answer is left out of that scrape. */
const METRICS_COLLECT_TIMEOUT_MS = 2_000;

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

const WORKER_ENTRY = fileURLToPath(new URL('./worker.js', import.meta.url));

/** A worker ended before it was ready, without saying why (its 'failed' message). */
class WorkerExitedWhileStarting extends Error {
  constructor() {
    super('A server worker exited while starting.');
  }
}

function waitFor<T extends FromWorker['type']>(worker: ChildProcess, type: T | 'failed'): Promise<Extract<FromWorker, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (msg: FromWorker) => {
      if (msg.type === 'failed') {
        cleanup();
        reject(usageError(msg.message));
      } else if (msg.type === type) {
        cleanup();
        resolve(msg as Extract<FromWorker, { type: T }>);
      }
    };
    const onExit = () => {
      cleanup();
      reject(new WorkerExitedWhileStarting());
    };
    const cleanup = () => {
      worker.off('message', onMessage);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('exit', onExit);
  });
}

const hasExited = (w: ChildProcess) => w.exitCode !== null || w.signalCode !== null;

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
 * A client's budget of failed password checks is the server's, not each process's: every one of `count`
 * processes gets its share (the burst divided, the refill as much slower), so that whichever process the
 * kernel hands each connection to, the server as a whole allows no more failures than one process would.
 */
export function failureShare(limits: AuthLimits | undefined, count: number): AuthLimits {
  const burst = limits?.failures ?? SERVE_AUTH_FAILURE_BURST;
  const refillMs = limits?.refillMs ?? SERVE_AUTH_FAILURE_REFILL_MS;
  return { ...limits, failures: Math.max(1, Math.floor(burst / count)), refillMs: refillMs * count };
}

/**
 * Runs `count` server processes on one listening socket: this process opens
 * it and serves, and hands it to `count - 1` forked workers that accept on it
 * too (the kernel gives each connection to whichever process accepts first),
 * so the TLS work of concurrent downloads spreads over every core and no
 * process only supervises. `count` 1 forks nothing. A worker that dies is
 * replaced while the server is not shutting down, after a delay that grows
 * while workers keep dying young (respawnDelayMs); why they die is said once.
 */
export async function startDepot(startOptions: DepotServerOptions, count: number, graceMs: number): Promise<RunningDepot> {
  // What a worker is started with: the start-up options, with the certificate of the last successful reload,
  // so that a worker replacing a dead one serves what the others serve.
  let options: DepotServerOptions = { ...startOptions, authLimits: failureShare(startOptions.authLimits, count) };
  let stopping = false;
  const live = new Set<ChildProcess>();
  let collectId = 0;

  /** A worker's metrics, or undefined when it does not answer in time (busy starting, or dying). */
  function snapshotOf(worker: ChildProcess): Promise<MetricsSnapshot | undefined> {
    if (!worker.connected) return Promise.resolve(undefined);
    const id = ++collectId;
    return new Promise((resolve) => {
      const done = (value: MetricsSnapshot | undefined) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        resolve(value);
      };
      const onMessage = (msg: FromWorker) => {
        if (msg.type === 'metrics-snapshot' && msg.id === id) done(msg.snapshot);
      };
      const onExit = () => done(undefined);
      const timer = setTimeout(() => done(undefined), METRICS_COLLECT_TIMEOUT_MS);
      worker.on('message', onMessage);
      worker.on('exit', onExit);
      const message: ToWorker = { type: 'metrics-collect', id };
      worker.send(message);
    });
  }

  /** Every serving process's metrics summed: those `given` (the primary's, a scraped worker's) and each other worker's. */
  async function collectMetrics(given: MetricsSnapshot[], except?: ChildProcess): Promise<string> {
    const others = await Promise.all([...live].filter((w) => w !== except).map(snapshotOf));
    return aggregateMetrics([...given, ...others.filter((s): s is MetricsSnapshot => s !== undefined)]);
  }

  // The primary looks at the depot (at start and on reload) and hands what it saw to every worker.
  const server: DepotServer = await startDepotServer(options, { collectMetrics: (own) => collectMetrics([own]) });
  let status: StatusData | undefined = await server.status();

  /** Hands the primary's latest look at the depot to every worker (and to those started later). */
  async function pushStatus(): Promise<void> {
    status = await server.status();
    if (!status) return;
    const message: ToWorker = { type: 'status', data: status };
    for (const w of live) if (w.connected) w.send(message);
  }

  // Workers that died young in a row; reset by one that served for SERVE_WORKER_STABLE_MS.
  let failures = 0;
  // What was last said about a dying worker: the same reason is said once, not at every attempt.
  let lastReason: string | undefined;
  let respawnTimer: NodeJS.Timeout | undefined;

  function replace(worker: ChildProcess, why: string, servedMs: number): void {
    if (servedMs >= SERVE_WORKER_STABLE_MS) failures = 0;
    failures++;
    const delay = respawnDelayMs(failures);
    if (why !== lastReason) {
      lastReason = why;
      const when = delay === 0 ? 'starting another' : `starting another in ${delay / 1000} s`;
      const more = failures > 1 ? `; while workers keep dying, each wait doubles (up to ${SERVE_RESPAWN_MAX_DELAY_MS / 1000} s) and this is not repeated` : '';
      process.stderr.write(`depotkit: a server worker (pid ${worker.pid}) ${why}; ${when}${more}. The other serving processes go on.\n`);
    }
    respawnTimer = setTimeout(() => {
      respawnTimer = undefined;
      if (stopping) return;
      spawn().then(
        () => {
          if (lastReason !== undefined && failures > 1) process.stderr.write('depotkit: a server worker is serving again.\n');
          lastReason = undefined;
        },
        // Said by the exit handler of that worker, which also schedules the next attempt.
        () => {},
      );
    }, delay);
  }

  async function spawn(): Promise<void> {
    // The primary's flags, not its arguments: the worker entry takes none.
    const worker = fork(WORKER_ENTRY, [], { stdio: 'inherit' });
    live.add(worker);
    // A message to a worker that has just died fails here; its exit is what is acted on.
    worker.on('error', () => {});
    let failure: string | undefined;
    // When it began to serve; 0 until then.
    let listeningAt = 0;
    worker.on('message', (msg: FromWorker) => {
      if (msg.type === 'failed') failure = msg.message;
      // A scrape that reached this worker: its metrics and every other process's, summed here.
      if (msg.type === 'metrics-request') {
        void (async () => {
          const text = await collectMetrics([server.metricsSnapshot(), msg.snapshot], worker).catch(() => '');
          const reply: ToWorker = { type: 'metrics-text', id: msg.id, text };
          if (worker.connected) worker.send(reply);
        })();
      }
    });
    worker.on('exit', (code, signal) => {
      live.delete(worker);
      // While the server starts, one that ends before it serves is forked again by startWorker.
      if (stopping || (!started && listeningAt === 0)) return;
      const why = failure !== undefined ? `could not start: ${failure.replace(/\.$/, '')}` : `exited (${signal ? `signal ${signal}` : `code ${code}`})`;
      replace(worker, why, listeningAt === 0 ? 0 : Date.now() - listeningAt);
    });
    // A message sent before the worker's module has run would be lost: wait for it to say so.
    await waitFor(worker, 'ready');
    const prepared = waitFor(worker, 'prepared');
    const start: ToWorker = { type: 'start', options, graceMs, status };
    worker.send(start);
    await prepared;
    const listening = waitFor(worker, 'listening');
    const listen: ToWorker = { type: 'listen' };
    worker.send(listen, server.listener);
    await listening;
    listeningAt = Date.now();
  }

  /** A worker for the start: one that ends before it serves without a failure of its own is forked again, a few times. */
  async function startWorker(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await spawn();
      } catch (err) {
        if (!(err instanceof WorkerExitedWhileStarting) || attempt >= SERVE_WORKER_START_ATTEMPTS) throw err;
      }
    }
  }

  let started = false;
  // However the primary ends (a second Ctrl-C exits at once), no worker outlives it.
  process.once('exit', () => {
    for (const w of live) w.kill('SIGKILL');
  });
  try {
    await Promise.all(Array.from({ length: count - 1 }, () => startWorker()));
  } catch (err) {
    stopping = true;
    for (const w of live) w.kill();
    await server.close();
    throw err;
  }
  started = true;

  return {
    url: server.url,
    port: server.port,
    workers: count,
    async reload(given) {
      let ownReloaded = false;
      try {
        // Read and checked once, here, before any process switches: a broken pair leaves every one on the old pair,
        // and every process gets the very same new one (a worker does not re-read files that may change meanwhile).
        const material = given ? checkTlsMaterial(given) : options.tls ? await loadTlsMaterial(options.tls) : undefined;
        const replies = [...live].map(async (w) => {
          const reply = waitFor(w, 'reloaded');
          const message: ToWorker = { type: 'reload', material };
          w.send(message);
          return (await reply).error;
        });
        // This process serves too, so it reloads like its workers (and looks at the depot again).
        ownReloaded = true;
        const own = server.reloadTls(material).then(
          () => undefined,
          (err: Error) => err.message,
        );
        const [ownError, ...workerErrors] = await Promise.all([own, ...replies]);
        if (material && ownError === undefined) options = { ...options, tls: material };
        const errors = [ownError, ...workerErrors].filter((e): e is string => e !== undefined);
        if (errors.length > 0) throw usageError(errors[0]!);
      } finally {
        // Whatever became of the certificate, every process shows the depot as it is now.
        if (!ownReloaded) await server.refreshStatus().catch(() => {});
        await pushStatus();
      }
    },
    async refreshStatus() {
      await server.refreshStatus();
      await pushStatus();
    },
    async reopenLog() {
      const replies = [...live].map(async (w) => {
        const reply = waitFor(w, 'log-reopened');
        const message: ToWorker = { type: 'reopen-log' };
        w.send(message);
        return (await reply).error;
      });
      const own = server.reopenLog().then(
        () => undefined,
        (err: Error) => err.message,
      );
      const errors = (await Promise.all([own, ...replies])).filter((e): e is string => e !== undefined);
      if (errors.length > 0) throw usageError(errors[0]!);
    },
    close(ms) {
      stopping = true;
      clearTimeout(respawnTimer);
      const exits = [...live].map((w) => new Promise<void>((resolve) => (hasExited(w) ? resolve() : w.once('exit', () => resolve()))));
      for (const w of live) {
        const message: ToWorker = { type: 'shutdown' };
        if (w.connected) w.send(message);
      }
      // A worker that does not end after the grace period and a margin is killed.
      const hard = setTimeout(() => {
        for (const w of live) w.kill('SIGKILL');
      }, ms + 5_000);
      return Promise.all([server.close(ms), ...exits]).then(() => clearTimeout(hard));
    },
  };
}
