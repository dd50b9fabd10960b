import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * Where downloaded bytes are hashed and written: worker threads, so that the
 * main thread only runs TLS and HTTP. SHA-256 and the copy into the page cache
 * are most of a mirror's CPU; on the main thread they queued behind the
 * sockets, and a machine's other cores (or, on a busy machine, its share of
 * them) went unused. Each file belongs to one thread, which takes its batches
 * in order, so its hash always covers exactly the bytes written, in order.
 * The thread is plain JavaScript evaluated from a string, as util/hash.ts's,
 * so that it runs the same from sources, dist/ and the single executable.
 */
const THREAD_CODE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const files = new Map();
const reply = (m, transfer) => parentPort.postMessage(m, transfer);
function writeAll(fd, buf, at) {
  let done = 0;
  while (done < buf.length) {
    const n = fs.writeSync(fd, buf, done, buf.length - done, at + done);
    if (n === 0) throw Object.assign(new Error('the file system took no byte of a write'), { code: 'EIO' });
    done += n;
  }
}
parentPort.on('message', (m) => {
  try {
    if (m.op === 'open') {
      // What an earlier run left is hashed again: a hash's state cannot be saved, the bytes can.
      const hash = createHash('sha256');
      const buf = Buffer.allocUnsafe(1 << 20);
      let have = 0;
      while (have < m.have) {
        const n = fs.readSync(m.fd, buf, 0, Math.min(buf.length, m.have - have), have);
        if (n === 0) break;
        hash.update(buf.subarray(0, n));
        have += n;
      }
      files.set(m.id, { fd: m.fd, hash, have });
      return reply({ id: m.id, have });
    }
    const f = files.get(m.id);
    if (m.op === 'write') {
      // After a failed write nothing more is written: the file's bytes and its hash stay in step.
      let error;
      if (f.error) error = f.error;
      else {
        try {
          const buf = Buffer.from(m.buf, 0, m.length);
          f.hash.update(buf);
          writeAll(f.fd, buf, f.have);
          f.have += m.length;
        } catch (err) {
          error = f.error = { message: err.message, code: err.code };
        }
      }
      // Every batch is answered, so that its owner knows when none is in flight; its memory goes back to be filled again.
      return reply({ id: m.id, written: m.length, buf: m.buf, error }, [m.buf]);
    }
    if (m.op === 'restart') {
      fs.ftruncateSync(f.fd, 0);
      f.hash = createHash('sha256');
      f.have = 0;
      return reply({ id: m.id, have: 0 });
    }
    if (m.op === 'digest') return reply({ id: m.id, sha256: f.hash.copy().digest('hex'), have: f.have });
    if (m.op === 'forget') files.delete(m.id);
  } catch (err) {
    reply({ id: m.id, error: { message: err.message, code: err.code } });
  }
});
`;

interface Reply {
  id: number;
  have?: number;
  written?: number;
  buf?: ArrayBuffer;
  sha256?: string;
  error?: { message: string; code?: string };
}

type Waiter = (reply: Reply) => void;

/** Bytes a batch holds: one message and one write per MiB. */
export const BATCH_BYTES = 1 << 20;

/** One file being written through a thread of the pool. */
export class FileSink {
  /** Bytes written and hashed so far. */
  have = 0;
  private failure: Error | undefined;
  private unacked = 0;
  private drainWaiters: Array<() => void> = [];
  private batch: Buffer | undefined;
  private filled = 0;

  constructor(
    private readonly pool: SinkPool,
    private readonly thread: Worker,
    readonly id: number,
  ) {}

  /** Bytes handed over and not yet written. */
  get pending(): number {
    return this.unacked + this.filled;
  }

  /** Copies `chunk` into batches, each handed to the thread when full. Throws a write failure already reported. */
  push(chunk: Buffer): void {
    if (this.failure) throw this.failure;
    let at = 0;
    while (at < chunk.length) {
      this.batch ??= this.pool.takeBuffer();
      const n = chunk.copy(this.batch, this.filled, at);
      this.filled += n;
      at += n;
      if (this.filled === this.batch.length) this.send();
    }
  }

  /** Hands over what the current batch holds. */
  private send(): void {
    if (!this.batch || this.filled === 0) return;
    const buf = this.batch.buffer as ArrayBuffer;
    const length = this.filled;
    this.batch = undefined;
    this.filled = 0;
    this.unacked += length;
    this.thread.postMessage({ op: 'write', id: this.id, buf, length }, [buf]);
  }

  /** A reply to a write (kept by the pool's dispatcher). */
  acked(reply: Reply): void {
    if (reply.buf) this.pool.giveBuffer(reply.buf);
    if (reply.written !== undefined) this.unacked -= reply.written;
    if (reply.error) this.failure ??= Object.assign(new Error(reply.error.message), { code: reply.error.code });
    else if (!this.failure) this.have += reply.written ?? 0;
    // A thread that died answers nothing more: its batches are in flight no longer.
    if (reply.written === undefined) this.unacked = 0;
    for (const w of this.drainWaiters.splice(0)) w();
  }

  /** Resolves once no batch is in flight, whatever became of them: the file may be closed then. */
  async quiet(): Promise<void> {
    this.batch = undefined;
    this.filled = 0;
    await this.below(1);
  }

  /** Resolves once everything pushed is written; throws the write's failure. */
  async flush(): Promise<void> {
    this.send();
    await this.below(1);
    if (this.failure) throw this.failure;
  }

  /** Resolves when fewer than `bytes` are in flight. */
  async below(bytes: number): Promise<void> {
    while (this.unacked >= bytes) await new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  /** Empties the file and starts a new hash. */
  async restart(): Promise<void> {
    await this.flush();
    await this.pool.ask(this.thread, { op: 'restart', id: this.id });
    this.have = 0;
  }

  /** The SHA-256 of the bytes written so far. */
  async digest(): Promise<string> {
    await this.flush();
    return (await this.pool.ask(this.thread, { op: 'digest', id: this.id })).sha256!;
  }

  /** Drops the sink (the file is closed by its owner). */
  forget(): void {
    this.batch = undefined;
    this.thread.postMessage({ op: 'forget', id: this.id });
    this.pool.drop(this.id);
  }
}

/** The threads a mirror writes through, one per core at most; closed when the mirror ends. */
export class SinkPool {
  private readonly threads: Worker[];
  private next = 0;
  private ids = 0;
  private readonly sinks = new Map<number, FileSink>();
  private readonly asked = new Map<number, Waiter>();
  private readonly spare: ArrayBuffer[] = [];

  constructor(size: number) {
    const count = Math.max(1, Math.min(size, availableParallelism()));
    this.threads = Array.from({ length: count }, () => {
      const thread = new Worker(THREAD_CODE, { eval: true });
      thread.on('message', (reply: Reply) => this.dispatch(reply));
      // A thread that dies fails the files it held rather than leaving them waiting.
      thread.on('error', (err) => this.failAll(err));
      thread.unref();
      return thread;
    });
  }

  private dispatch(reply: Reply): void {
    const waiter = this.asked.get(reply.id);
    if (waiter && reply.written === undefined) {
      this.asked.delete(reply.id);
      return waiter(reply);
    }
    this.sinks.get(reply.id)?.acked(reply);
  }

  private failAll(err: Error): void {
    for (const sink of this.sinks.values()) sink.acked({ id: sink.id, error: { message: err.message } });
    for (const [id, waiter] of this.asked) waiter({ id, error: { message: err.message } });
    this.asked.clear();
  }

  /** A sink for the open file `fd`, whose first `have` bytes are hashed again first; `have` comes back as read. */
  async open(fd: number, have: number): Promise<FileSink> {
    const thread = this.threads[this.next++ % this.threads.length]!;
    const sink = new FileSink(this, thread, this.ids++);
    this.sinks.set(sink.id, sink);
    sink.have = (await this.ask(thread, { op: 'open', id: sink.id, fd, have })).have!;
    return sink;
  }

  async ask(thread: Worker, message: { op: string; id: number; [k: string]: unknown }): Promise<Reply> {
    const reply = await new Promise<Reply>((resolve) => {
      this.asked.set(message.id, resolve);
      thread.postMessage(message);
    });
    if (reply.error) throw Object.assign(new Error(reply.error.message), { code: reply.error.code });
    return reply;
  }

  drop(id: number): void {
    this.sinks.delete(id);
    this.asked.delete(id);
  }

  takeBuffer(): Buffer {
    const spare = this.spare.pop();
    return spare ? Buffer.from(spare) : Buffer.allocUnsafeSlow(BATCH_BYTES);
  }

  giveBuffer(buf: ArrayBuffer): void {
    if (this.spare.length < 64) this.spare.push(buf);
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.terminate()));
  }
}
