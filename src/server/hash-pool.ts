import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** The queue of checks is full: the caller answers 503 and the client tries again later. */
export class HashPoolBusy extends Error {
  constructor() {
    super('too many password checks in progress');
    this.name = 'HashPoolBusy';
  }
}

/**
 * bcrypt off the serving thread. bcryptjs is pure JavaScript: on the event loop a cost-12 check holds it
 * for a quarter of a second, and twenty wrong passwords at once made every other request wait seconds.
 * Here each check runs in a worker thread, one at a time per thread, and at most `maxPending` checks
 * (running and waiting) are accepted at once; beyond that `HashPoolBusy` is thrown at once.
 */
export interface HashPool {
  /** Throws HashPoolBusy when `maxPending` checks are running or waiting. */
  compare(password: string, hash: string): Promise<boolean>;
  /** A new hash; never turned away. */
  hash(password: string, cost: number): Promise<string>;
  /** Checks running or waiting. */
  readonly pending: number;
  close(): Promise<void>;
}

// The thread's code: CommonJS given as text, so that it runs alike from the sources (tests) and from dist/.
const THREAD_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const bcrypt = require(workerData.bcrypt);
parentPort.on('message', (job) => {
  try {
    const result = job.op === 'compare' ? bcrypt.compareSync(job.password, job.hash) : bcrypt.hashSync(job.password, job.cost);
    parentPort.postMessage({ id: job.id, result });
  } catch (err) {
    parentPort.postMessage({ id: job.id, error: String((err && err.message) || err) });
  }
});
`;

type JobSpec = { op: 'compare'; password: string; hash: string } | { op: 'hash'; password: string; cost: number };
type Job = JobSpec & { id: number };

interface Waiting {
  job: Job;
  resolve: (value: boolean | string) => void;
  reject: (err: Error) => void;
}

interface Thread {
  worker: Worker;
  busy?: Waiting;
}

export function createHashPool(threads: number, maxPending: number): HashPool {
  const bcryptPath = createRequire(import.meta.url).resolve('bcryptjs');
  const queue: Waiting[] = [];
  const pool: Thread[] = [];
  let nextId = 1;
  let closed = false;

  function spawnThread(): Thread {
    const thread: Thread = { worker: new Worker(THREAD_CODE, { eval: true, workerData: { bcrypt: bcryptPath } }) };
    // The serving process decides when to end, not an idle hashing thread.
    thread.worker.unref();
    thread.worker.on('message', (msg: { id: number; result?: boolean | string; error?: string }) => {
      const done = thread.busy;
      thread.busy = undefined;
      if (done && done.job.id === msg.id) {
        if (msg.error !== undefined) done.reject(new Error(msg.error));
        else done.resolve(msg.result!);
      }
      pump();
    });
    const lost = (err: Error) => {
      pool.splice(pool.indexOf(thread), 1);
      thread.busy?.reject(err);
      thread.busy = undefined;
      pump();
    };
    thread.worker.on('error', lost);
    thread.worker.on('exit', () => {
      if (pool.includes(thread)) lost(new Error('the password-checking thread ended'));
    });
    pool.push(thread);
    return thread;
  }

  function pump(): void {
    while (queue.length > 0 && !closed) {
      const idle = pool.find((t) => !t.busy) ?? (pool.length < threads ? spawnThread() : undefined);
      if (!idle) return;
      const next = queue.shift()!;
      idle.busy = next;
      idle.worker.postMessage(next.job);
    }
  }

  function submit(job: JobSpec, bounded: boolean): Promise<boolean | string> {
    if (closed) return Promise.reject(new Error('the server is closing'));
    const running = pool.filter((t) => t.busy).length;
    if (bounded && running + queue.length >= maxPending) return Promise.reject(new HashPoolBusy());
    return new Promise((resolve, reject) => {
      queue.push({ job: { ...job, id: nextId++ }, resolve, reject });
      pump();
    });
  }

  return {
    compare: async (password, hash) => (await submit({ op: 'compare', password, hash }, true)) === true,
    // The server's own hashing (the decoy, at start and reload) is not turned away by a flood of checks.
    hash: async (password, cost) => String(await submit({ op: 'hash', password, cost }, false)),
    get pending() {
      return pool.filter((t) => t.busy).length + queue.length;
    },
    async close() {
      closed = true;
      for (const w of queue.splice(0)) w.reject(new Error('the server is closing'));
      await Promise.all(pool.splice(0).map((t) => t.worker.terminate()));
    },
  };
}
