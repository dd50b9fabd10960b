import { Worker } from 'node:worker_threads';

/**
 * A SHA-256 computed on a worker thread, fed in order. Node hashes on the
 * calling thread, so a second hash of the same bytes (a volume's beside its
 * files', a download's beside its TLS decryption) would otherwise wait for the
 * first: on its own thread it runs on another core. Plain JavaScript evaluated
 * from a string, so it runs the same from sources and from dist/.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
let hash = createHash('sha256');
parentPort.on('message', (msg) => {
  if (msg === 'digest') {
    parentPort.postMessage({ digest: hash.digest('hex') });
    hash = createHash('sha256');
    return;
  }
  hash.update(msg);
  parentPort.postMessage({ done: msg.length });
});
`;

/** Bytes sent to the worker and not yet hashed, before `update` waits: bounds the memory a slow worker holds. */
const BACKLOG_BYTES = 64 * 1024 * 1024;

export class ThreadHash {
  private readonly worker = new Worker(WORKER_SOURCE, { eval: true });
  private backlog = 0;
  private drained?: () => void;
  private digested?: (hex: string) => void;
  private failure?: Error;

  constructor() {
    this.worker.on('message', (msg: { done?: number; digest?: string }) => {
      if (msg.done !== undefined) {
        this.backlog -= msg.done;
        if (this.backlog <= BACKLOG_BYTES / 2) this.drained?.();
      } else if (msg.digest !== undefined) this.digested?.(msg.digest);
    });
    this.worker.on('error', (err) => {
      this.failure = err;
      this.drained?.();
    });
    // Not unref'd: a caller waiting for the worker's answer must keep the process alive. close() ends it.
  }

  /** Adds bytes (copied to the worker: the caller may reuse `data`); waits only when the worker is far behind. */
  async update(data: Uint8Array): Promise<void> {
    if (this.failure) throw this.failure;
    if (data.length === 0) return;
    this.backlog += data.length;
    // A copy of just these bytes, handed over without a second copy (a view would clone its whole buffer).
    const copy = new Uint8Array(data);
    this.worker.postMessage(copy, [copy.buffer]);
    if (this.backlog > BACKLOG_BYTES) {
      await new Promise<void>((resolve) => (this.drained = resolve));
      this.drained = undefined;
      if (this.failure) throw this.failure;
    }
  }

  /** The hex digest of everything added since the last one; the hash starts again empty. */
  async digest(): Promise<string> {
    if (this.failure) throw this.failure;
    const result = new Promise<string>((resolve) => (this.digested = resolve));
    this.worker.postMessage('digest');
    const hex = await result;
    this.digested = undefined;
    return hex;
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
