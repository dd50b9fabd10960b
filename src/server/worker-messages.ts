import type { ChildProcess } from 'node:child_process';
import { usageError } from '../util/errors.js';
import type { MetricsSnapshot } from './metrics.js';
import type { StatusData } from './status-data.js';
import type { TlsMaterial } from './tls.js';
import type { DepotServerOptions } from './types.js';

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

/** A worker ended before it was ready, without saying why (its 'failed' message). */
export class WorkerExitedWhileStarting extends Error {
  constructor() {
    super('A server worker exited while starting.');
  }
}

/** The worker's next message of `type`; its 'failed' message as a usage error, its exit as WorkerExitedWhileStarting. */
export function waitFor<T extends FromWorker['type']>(worker: ChildProcess, type: T | 'failed'): Promise<Extract<FromWorker, { type: T }>> {
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

/**
 * Sends `message` to each worker and waits for its `reply`: the error each reports, or undefined. A worker that
 * ends before it replies has nothing left to reload or reopen: the one replacing it starts with what is current.
 */
export function askEach(workers: Iterable<ChildProcess>, message: ToWorker, reply: 'reloaded' | 'log-reopened'): Promise<string | undefined>[] {
  return [...workers].map(async (w) => {
    const answer = waitFor(w, reply);
    w.send(message);
    try {
      return (await answer).error;
    } catch (err) {
      if (err instanceof WorkerExitedWhileStarting) return undefined;
      throw err;
    }
  });
}

/** Sends `message` to a worker that can still receive it. */
export function tell(worker: ChildProcess, message: ToWorker): void {
  if (worker.connected) worker.send(message);
}
