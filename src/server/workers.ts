import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { usageError } from '../util/errors.js';
import type { DepotServerOptions } from './index.js';
import type { TlsMaterial } from './tls.js';

/** Messages between the primary and its workers. */
export type ToWorker =
  | { type: 'start'; options: DepotServerOptions; graceMs: number }
  | { type: 'reload'; material?: TlsMaterial }
  | { type: 'shutdown' };
export type FromWorker = { type: 'ready' } | { type: 'listening'; url: string; port: number } | { type: 'failed'; message: string } | { type: 'reloaded'; error?: string };

export interface RunningDepot {
  url: string;
  port: number;
  workers: number;
  /** New certificate and key (or the files re-read) for every worker; open connections stay. */
  reload(material?: TlsMaterial): Promise<void>;
  /** Stops accepting, lets running downloads finish for up to `graceMs`, then ends. */
  close(graceMs: number): Promise<void>;
}

const WORKER_ENTRY = fileURLToPath(new URL('./worker.js', import.meta.url));

function waitFor<T extends FromWorker['type']>(worker: Worker, type: T | 'failed'): Promise<Extract<FromWorker, { type: T }>> {
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

/**
 * Runs `count` server processes sharing one listening port (node:cluster): the
 * TLS work of concurrent downloads spreads over every core. A worker that dies
 * is replaced while the server is not shutting down.
 */
export async function startWorkers(options: DepotServerOptions, count: number, graceMs: number): Promise<RunningDepot> {
  // Each worker accepts from the one shared socket itself (the kernel spreads connections): the primary
  // stays out of the data path, and on shutdown a connection is either served or refused, never parked
  // with a worker that has stopped listening, as round-robin hand-off can do.
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  cluster.setupPrimary({ exec: WORKER_ENTRY, args: [] });
  let stopping = false;
  const live = new Set<Worker>();

  async function spawn(): Promise<{ url: string; port: number }> {
    const worker = cluster.fork();
    live.add(worker);
    worker.on('exit', () => {
      live.delete(worker);
      if (!stopping && started) {
        process.stderr.write(`depotkit: a server worker exited (pid ${worker.process.pid}); starting another.\n`);
        void spawn().catch((err: Error) => process.stderr.write(`depotkit: ${err.message}\n`));
      }
    });
    // A message sent before the worker's module has run would be lost: wait for it to say so.
    await waitFor(worker, 'ready');
    const listening = waitFor(worker, 'listening');
    const message: ToWorker = { type: 'start', options, graceMs };
    worker.send(message);
    return listening;
  }

  let started = false;
  // However the primary ends (a second Ctrl-C exits at once), no worker outlives it.
  process.once('exit', () => {
    for (const w of live) w.process.kill('SIGKILL');
  });
  // Workers listening on the same (address, port), even port 0, share the primary's one socket.
  let first: { url: string; port: number };
  try {
    first = await spawn();
    await Promise.all(Array.from({ length: count - 1 }, () => spawn()));
  } catch (err) {
    stopping = true;
    for (const w of live) w.kill();
    throw err;
  }
  started = true;

  return {
    url: first.url,
    port: first.port,
    workers: count,
    async reload(material) {
      const replies = [...live].map((w) => {
        const reply = waitFor(w, 'reloaded');
        const message: ToWorker = { type: 'reload', material };
        w.send(message);
        return reply;
      });
      const errors = (await Promise.all(replies)).map((r) => r.error).filter((e): e is string => e !== undefined);
      if (errors.length > 0) throw usageError(errors[0]!);
    },
    close(ms) {
      stopping = true;
      const exits = [...live].map((w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once('exit', () => resolve()))));
      for (const w of live) {
        const message: ToWorker = { type: 'shutdown' };
        if (w.isConnected()) w.send(message);
      }
      // A worker that does not end after the grace period and a margin is killed.
      const hard = setTimeout(() => {
        for (const w of live) w.process.kill('SIGKILL');
      }, ms + 5_000);
      return Promise.all(exits).then(() => clearTimeout(hard));
    },
  };
}
