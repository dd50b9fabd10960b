import type { ChildProcess } from 'node:child_process';
import { aggregateMetrics, type MetricsSnapshot } from './metrics.js';
import { tell, type FromWorker, type ToWorker } from './worker-messages.js';

/** How long a scrape waits for a serving process's metrics; one that does not answer is left out of that scrape. */
const METRICS_COLLECT_TIMEOUT_MS = 2_000;

/** The metrics of every serving process summed, whichever process a scrape reached. */
export class MetricsGatherer {
  private collectId = 0;

  /** `workers`: the live workers, kept up to date by their owner. */
  constructor(private readonly workers: ReadonlySet<ChildProcess>) {}

  /** Every serving process's metrics summed: those `given` (the primary's, a scraped worker's) and each other worker's. */
  async collect(given: MetricsSnapshot[], except?: ChildProcess): Promise<string> {
    const others = await Promise.all([...this.workers].filter((w) => w !== except).map((w) => this.snapshotOf(w)));
    return aggregateMetrics([...given, ...others.filter((s): s is MetricsSnapshot => s !== undefined)]);
  }

  /** Answers a scrape that reached `worker` (its `snapshot`): its metrics, the primary's (`own`) and every other process's, summed. */
  async answer(worker: ChildProcess, id: number, own: MetricsSnapshot, snapshot: MetricsSnapshot): Promise<void> {
    const text = await this.collect([own, snapshot], worker).catch(() => '');
    tell(worker, { type: 'metrics-text', id, text });
  }

  /** A worker's metrics, or undefined when it does not answer in time (busy starting, or dying). */
  private snapshotOf(worker: ChildProcess): Promise<MetricsSnapshot | undefined> {
    if (!worker.connected) return Promise.resolve(undefined);
    const id = ++this.collectId;
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
}
