import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { MetricsGatherer } from './metrics-gather.js';
import { RespawnPolicy } from './respawn.js';
import type { StatusData } from './status-data.js';
import { SERVE_WORKER_START_ATTEMPTS } from './tuning.js';
import type { DepotServer, DepotServerOptions } from './types.js';
import { workerEnv } from './worker-env.js';
import { askEach, tell, waitFor, WorkerExitedWhileStarting, type FromWorker, type ToWorker } from './worker-messages.js';

// Beside this module in tsc's dist/server/, and beside the chunk that holds it in the CLI's bundle (dist/cli/worker.js).
const WORKER_ENTRY = fileURLToPath(new URL('./worker.js', import.meta.url));

const hasExited = (w: ChildProcess) => w.exitCode !== null || w.signalCode !== null;

/**
 * The forked workers of a server: each accepts on the primary's listening socket. A worker that dies is
 * replaced while the server is not stopping (RespawnPolicy).
 */
export class WorkerPool {
  /**
   * What a worker is started with: the start-up options, with the certificate of the last successful reload,
   * so that a worker replacing a dead one serves what the others serve.
   */
  options: DepotServerOptions;
  /** The primary's latest look at the depot, which every worker shows. */
  private status: StatusData | undefined;
  private stopping = false;
  /** Every worker has served once: from then on one that dies is replaced. */
  private started = false;
  private readonly respawn = new RespawnPolicy(() => this.spawn());
  /** The workers being started: each resolves once that worker serves the pool's current pair. */
  private readonly starting = new Set<Promise<void>>();

  /** `live`: the workers alive, which this pool keeps up to date (the metrics gatherer reads it). */
  constructor(
    private readonly primary: DepotServer,
    private readonly live: Set<ChildProcess>,
    private readonly metrics: MetricsGatherer,
    options: DepotServerOptions,
    private readonly graceMs: number,
    status: StatusData | undefined,
  ) {
    this.options = options;
    this.status = status;
  }

  /** Starts `count` workers and resolves once every one serves; one that fails stops them all, and its reason is thrown. */
  async start(count: number): Promise<void> {
    try {
      await Promise.all(Array.from({ length: count }, () => this.startWorker()));
    } catch (err) {
      this.stopping = true;
      this.respawn.stop();
      this.kill();
      throw err;
    }
    this.started = true;
  }

  kill(signal?: NodeJS.Signals): void {
    for (const w of this.live) w.kill(signal);
  }

  /** Sends `message` to each worker and waits for its `reply`: the error each reports, or undefined. */
  ask(message: ToWorker, reply: 'reloaded' | 'log-reopened'): Promise<string | undefined>[] {
    return askEach(this.live, message, reply);
  }

  /** Hands the primary's latest look at the depot to every worker (and to those started later). */
  async pushStatus(): Promise<void> {
    this.status = await this.primary.status();
    if (!this.status) return;
    const message: ToWorker = { type: 'status', data: this.status };
    for (const w of this.live) tell(w, message);
  }

  /** Tells every worker to finish its downloads for up to `graceMs` and end; one still running after a margin is killed. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.respawn.stop();
    const exits = [...this.live].map((w) => new Promise<void>((resolve) => (hasExited(w) ? resolve() : w.once('exit', () => resolve()))));
    for (const w of this.live) tell(w, { type: 'shutdown' });
    const hard = setTimeout(() => this.kill('SIGKILL'), graceMs + 5_000);
    await Promise.all(exits);
    clearTimeout(hard);
  }

  /** A worker for the start: one that ends before it serves without a failure of its own is forked again, a few times. */
  private async startWorker(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.spawn();
      } catch (err) {
        if (!(err instanceof WorkerExitedWhileStarting) || attempt >= SERVE_WORKER_START_ATTEMPTS) throw err;
      }
    }
  }

  /**
   * Resolves once every worker being started now serves, with the pair the pool starts one with: a reload is
   * done only when a worker that was starting meanwhile has caught up (spawn), not just the workers that served.
   */
  async startsSettled(): Promise<void> {
    await Promise.allSettled([...this.starting]);
  }

  /** Forks a worker and serves with it (start), tracked while it starts (startsSettled). */
  private spawn(): Promise<void> {
    const started = this.startOne();
    this.starting.add(started);
    // Its failure is the caller's to act on; this copy only stops tracking it.
    started.then(
      () => this.starting.delete(started),
      () => this.starting.delete(started),
    );
    return started;
  }

  /** Forks a worker, prepares it, hands it the socket; resolves once it serves. */
  private async startOne(): Promise<void> {
    // The primary's flags, not its arguments: the worker entry takes none. A small young generation (worker-env.ts).
    const worker = fork(WORKER_ENTRY, [], { stdio: 'inherit', env: workerEnv() });
    this.live.add(worker);
    // A message to a worker that has just died fails here; its exit is what is acted on.
    worker.on('error', () => {});
    const life = this.watch(worker);
    // A message sent before the worker's module has run would be lost: wait for it to say so.
    await waitFor(worker, 'ready');
    const prepared = waitFor(worker, 'prepared');
    const startedWith = this.options;
    const start: ToWorker = { type: 'start', options: startedWith, graceMs: this.graceMs, status: this.status };
    worker.send(start);
    await prepared;
    const listening = waitFor(worker, 'listening');
    const listen: ToWorker = { type: 'listen' };
    worker.send(listen, this.primary.listener);
    await listening;
    life.listeningAt = Date.now();
    // A reload while it started reached it before it served, when it had nothing to reload: hand it the pair now.
    if (this.options.tls !== startedWith.tls) await this.catchUp(worker);
  }

  /** Reloads `worker` with the current certificate and key until it holds the pair the others serve. */
  private async catchUp(worker: ChildProcess): Promise<void> {
    for (let material = this.options.tls; ; material = this.options.tls) {
      const [error] = askEach([worker], { type: 'reload', material: material && 'certPem' in material ? material : undefined }, 'reloaded');
      if ((await error) !== undefined || this.options.tls === material) return;
    }
  }

  /** Listens to a worker for its life: its failure, the scrapes it passes on, and its exit (replaced, after a delay). */
  private watch(worker: ChildProcess): { listeningAt: number } {
    // When it began to serve; 0 until then.
    const life = { listeningAt: 0 };
    let failure: string | undefined;
    worker.on('message', (msg: FromWorker) => {
      if (msg.type === 'failed') failure = msg.message;
      // A scrape that reached this worker: its metrics and every other process's, summed here.
      if (msg.type === 'metrics-request') void this.metrics.answer(worker, msg.id, this.primary.metricsSnapshot(), msg.snapshot);
    });
    worker.on('exit', (code, signal) => {
      this.live.delete(worker);
      // While the server starts, one that ends before it serves is forked again by startWorker.
      if (this.stopping || (!this.started && life.listeningAt === 0)) return;
      const why = failure !== undefined ? `could not start: ${failure.replace(/\.$/, '')}` : `exited (${signal ? `signal ${signal}` : `code ${code}`})`;
      this.respawn.died(worker.pid, why, life.listeningAt === 0 ? 0 : Date.now() - life.listeningAt);
    });
    return life;
  }
}
