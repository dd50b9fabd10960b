import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SERVE_RESPAWN_FIRST_DELAY_MS, SERVE_RESPAWN_MAX_DELAY_MS, SERVE_WORKER_STABLE_MS } from '../constants.js';
import { usageError } from '../util/errors.js';
import { startDepotServer, type DepotServer, type DepotServerOptions } from './index.js';
import { checkTlsMaterial, loadTlsMaterial, type TlsMaterial } from './tls.js';

/**
 * Messages between the primary and its workers. A worker prepares its server on 'start' and is
 * handed the listening socket with 'listen' only once prepared (see PreparedDepotServer.listen).
 */
export type ToWorker =
  | { type: 'start'; options: DepotServerOptions; graceMs: number }
  | { type: 'listen' }
  | { type: 'reload'; material?: TlsMaterial }
  | { type: 'reopen-log' }
  | { type: 'shutdown' };
export type FromWorker =
  | { type: 'ready' }
  | { type: 'prepared' }
  | { type: 'listening'; url: string; port: number }
  | { type: 'failed'; message: string }
  | { type: 'reloaded'; error?: string }
  | { type: 'log-reopened'; error?: string };

export interface RunningDepot {
  url: string;
  port: number;
  /** Serving processes, this one included. */
  workers: number;
  /** New certificate and key (or the files re-read) for every serving process; open connections stay. */
  reload(material?: TlsMaterial): Promise<void>;
  /** Every serving process opens its access log file again at its path (logrotate renamed it). */
  reopenLog(): Promise<void>;
  /** Stops accepting, lets running downloads finish for up to `graceMs`, then ends. */
  close(graceMs: number): Promise<void>;
}

const WORKER_ENTRY = fileURLToPath(new URL('./worker.js', import.meta.url));

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
      reject(new Error('A server worker exited while starting.'));
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
  let options = startOptions;
  const server: DepotServer = await startDepotServer(options);
  let stopping = false;
  const live = new Set<ChildProcess>();

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
    let failure: string | undefined;
    // When it began to serve; 0 until then.
    let listeningAt = 0;
    worker.on('message', (msg: FromWorker) => {
      if (msg.type === 'failed') failure = msg.message;
    });
    worker.on('exit', (code, signal) => {
      live.delete(worker);
      if (stopping || !started) return;
      const why = failure !== undefined ? `could not start: ${failure.replace(/\.$/, '')}` : `exited (${signal ? `signal ${signal}` : `code ${code}`})`;
      replace(worker, why, listeningAt === 0 ? 0 : Date.now() - listeningAt);
    });
    // A message sent before the worker's module has run would be lost: wait for it to say so.
    await waitFor(worker, 'ready');
    const prepared = waitFor(worker, 'prepared');
    const start: ToWorker = { type: 'start', options, graceMs };
    worker.send(start);
    await prepared;
    const listening = waitFor(worker, 'listening');
    const listen: ToWorker = { type: 'listen' };
    worker.send(listen, server.listener);
    await listening;
    listeningAt = Date.now();
  }

  let started = false;
  // However the primary ends (a second Ctrl-C exits at once), no worker outlives it.
  process.once('exit', () => {
    for (const w of live) w.kill('SIGKILL');
  });
  try {
    await Promise.all(Array.from({ length: count - 1 }, () => spawn()));
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
      // Read and checked once, here, before any process switches: a broken pair leaves every one on the old pair,
      // and every process gets the very same new one (a worker does not re-read files that may change meanwhile).
      const material = given ? checkTlsMaterial(given) : options.tls ? await loadTlsMaterial(options.tls) : undefined;
      const replies = [...live].map(async (w) => {
        const reply = waitFor(w, 'reloaded');
        const message: ToWorker = { type: 'reload', material };
        w.send(message);
        return (await reply).error;
      });
      // This process serves too, so it reloads like its workers.
      const own = server.reloadTls(material).then(
        () => undefined,
        (err: Error) => err.message,
      );
      const [ownError, ...workerErrors] = await Promise.all([own, ...replies]);
      if (material && ownError === undefined) options = { ...options, tls: material };
      const errors = [ownError, ...workerErrors].filter((e): e is string => e !== undefined);
      if (errors.length > 0) throw usageError(errors[0]!);
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
