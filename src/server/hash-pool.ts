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
 * (running and waiting) are accepted at once. The waiting check with the lowest rank runs next (the oldest
 * among equals); when the pool is full a new check turns away the waiting check of the highest rank if its
 * own is lower, else it is turned away itself: `HashPoolBusy`, at once.
 */
export interface HashPool {
  /**
   * Throws HashPoolBusy when `maxPending` checks are running or waiting and none waiting ranks above this one.
   * `rank` is read whenever checks are compared, so it may change while the check waits (0 when not given).
   */
  compare(password: string, hash: string, rank?: () => number): Promise<boolean>;
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
  rank: () => number;
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
      const next = queue.splice(queue.indexOf(ranked(queue, (a, b) => a < b)), 1)[0]!;
      idle.busy = next;
      idle.worker.postMessage(next.job);
    }
  }

  /** Whether a check of `rank` may wait: there is room, or a waiting check of a higher rank gives up its place. */
  function makeRoom(rank: number): boolean {
    if (pool.filter((t) => t.busy).length + queue.length < maxPending) return true;
    if (queue.length === 0) return false;
    // Of the highest rank, the newest: it has waited least.
    const worst = ranked([...queue].reverse(), (a, b) => a > b);
    if (worst.rank() <= rank) return false;
    queue.splice(queue.indexOf(worst), 1);
    worst.reject(new HashPoolBusy());
    return true;
  }

  function submit(job: JobSpec, rank: (() => number) | undefined): Promise<boolean | string> {
    if (closed) return Promise.reject(new Error('the server is closing'));
    // The server's own hashing (the decoy, at start and reload) goes first and is never turned away.
    const order = rank ?? (() => -Infinity);
    if (rank && !makeRoom(rank())) return Promise.reject(new HashPoolBusy());
    return new Promise((resolve, reject) => {
      queue.push({ job: { ...job, id: nextId++ }, rank: order, resolve, reject });
      pump();
    });
  }

  return {
    compare: async (password, hash, rank = () => 0) => (await submit({ op: 'compare', password, hash }, rank)) === true,
    hash: async (password, cost) => String(await submit({ op: 'hash', password, cost }, undefined)),
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

/** The first of `waiting` (non-empty) whose rank `better` prefers to every earlier one's. */
function ranked(waiting: Waiting[], better: (a: number, b: number) => boolean): Waiting {
  let best = waiting[0]!;
  let bestRank = best.rank();
  for (const w of waiting.slice(1)) {
    const r = w.rank();
    if (better(r, bestRank)) [best, bestRank] = [w, r];
  }
  return best;
}
