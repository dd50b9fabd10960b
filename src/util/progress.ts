import { createRequire } from 'node:module';
import type CliProgress from 'cli-progress';
import { formatBytes } from './text.js';

export interface Progress {
  /** Adds `delta` units of work done. */
  tick(delta: number): void;
  stop(): void;
}

/** cli-progress, loaded when a bar is drawn (on a terminal), not at every start. */
const cliProgressLib = (): typeof CliProgress => createRequire(import.meta.url)('cli-progress') as typeof CliProgress;

const silent: Progress = { tick: () => {}, stop: () => {} };

/**
 * A byte progress bar on stderr when it is a TTY (and output is not JSON);
 * otherwise nothing, so logs and pipes stay clean.
 */
export function byteProgress(label: string, totalBytes: number, enabled = process.stderr.isTTY === true): Progress {
  if (!enabled || totalBytes <= 0) return silent;
  const cliProgress = cliProgressLib();
  const bar = new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {percentage}% | {done}/{all} | {speed}`,
      stream: process.stderr,
      hideCursor: true,
      clearOnComplete: true,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  const started = Date.now();
  let done = 0;
  const payload = () => ({
    done: formatBytes(done),
    all: formatBytes(totalBytes),
    speed: `${formatBytes(done / Math.max(0.001, (Date.now() - started) / 1000))}/s`,
  });
  bar.start(totalBytes, 0, payload());
  return {
    tick(delta) {
      done += delta;
      bar.update(done, payload());
    },
    stop() {
      bar.stop();
    },
  };
}

/** A byte count as work goes; a library's options take it as `Partial<ProgressHooks>` (both optional). */
export interface ProgressHooks {
  /** Called once the total is known. */
  onStart: (totalBytes: number) => void;
  onBytes: (n: number) => void;
}

/** Runs `work` with a byte progress bar that appears once it announces its total. */
export async function withByteProgress<T>(label: string, enabled: boolean, work: (hooks: ProgressHooks) => Promise<T>): Promise<T> {
  let progress: Progress | undefined;
  try {
    return await work({
      onStart: (total) => {
        if (enabled) progress = byteProgress(label, total);
      },
      onBytes: (n) => progress?.tick(n),
    });
  } finally {
    progress?.stop();
  }
}

export interface ByteBars {
  /** Shows `done` of `total` bytes on the bar named `key` (made on first use). */
  update(key: string, label: string, done: number, total: number): void;
  stop(): void;
}

/** One byte bar per item on stderr when it is a TTY; otherwise nothing. */
export function byteBars(enabled = process.stderr.isTTY === true): ByteBars {
  if (!enabled) return { update: () => {}, stop: () => {} };
  const cliProgress = cliProgressLib();
  const multi = new cliProgress.MultiBar(
    { format: '{label} [{bar}] {percentage}% | {done}/{all}', stream: process.stderr, hideCursor: true, clearOnComplete: true, fps: 5 },
    cliProgress.Presets.shades_classic,
  );
  const bars = new Map<string, CliProgress.SingleBar>();
  return {
    update(key, label, done, total) {
      const payload = { label, done: formatBytes(done), all: formatBytes(total) };
      let bar = bars.get(key);
      if (!bar) {
        bar = multi.create(Math.max(total, 1), done, payload);
        bars.set(key, bar);
      } else bar.update(done, payload);
    },
    stop() {
      multi.stop();
    },
  };
}

export { formatBytes } from './text.js';

/** How far a run over many items is: finished ok, failed, and not finished yet. */
export interface CountState {
  total: number;
  done: number;
  failed: number;
}

/** `consumers: 9,812 done, 9,800 failed, 188 left (of 10,000)`: done counts the items that finished ok. */
export function countLine(label: string, { total, done, failed }: CountState): string {
  const n = (v: number) => v.toLocaleString('en-US');
  return `${label}: ${n(done)} done, ${n(failed)} failed, ${n(total - done - failed)} left (of ${n(total)})`;
}

export interface CountProgress {
  /** One item finished, ok or failed. */
  item(ok: boolean): void;
  /** Writes the last count, so that it stays above what the command prints next. */
  stop(): void;
}

/** The writable a count line goes to: a terminal (stderr by default). */
export interface CountStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

/** Redraws are at most this often: a fleet of refused consumers finishes thousands of items a second. */
const COUNT_REDRAW_MS = 100;

/**
 * One line on a terminal, redrawn in place as items finish (at most every
 * 100 ms, and once at the end); nothing when the stream is not a terminal, so
 * logs and pipes stay clean.
 */
export function countProgress(label: string, total: number, stream: CountStream = process.stderr, enabled = stream.isTTY === true): CountProgress {
  if (!enabled || total <= 0) return { item: () => {}, stop: () => {} };
  const state: CountState = { total, done: 0, failed: 0 };
  let drawn = 0;
  const draw = () => {
    stream.write(`\r\x1b[2K${countLine(label, state)}`);
    drawn = Date.now();
  };
  draw();
  let stopped = false;
  return {
    item(ok) {
      if (ok) state.done++;
      else state.failed++;
      if (Date.now() - drawn >= COUNT_REDRAW_MS) draw();
    },
    stop() {
      if (stopped) return;
      stopped = true;
      draw();
      stream.write('\n');
    },
  };
}
