import cliProgress from 'cli-progress';

export interface Progress {
  /** Adds `delta` units of work done. */
  tick(delta: number): void;
  stop(): void;
}

const silent: Progress = { tick: () => {}, stop: () => {} };

/**
 * A byte progress bar on stderr when it is a TTY (and output is not JSON);
 * otherwise nothing, so logs and pipes stay clean.
 */
export function byteProgress(label: string, totalBytes: number, enabled = process.stderr.isTTY === true): Progress {
  if (!enabled || totalBytes <= 0) return silent;
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

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}
