// What the soak reads of the serve processes in /proc (Linux only), and the statistics of its summary.
import { readdirSync, readFileSync } from 'node:fs';

/** The fields of /proc/<pid>/stat after the command name, which may hold spaces and parentheses. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The child processes of `pid` (serve's workers: forked by the primary), found by each process's parent pid. */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    // Field 4 of stat, the parent pid, is the second after the name.
    if (Number(statFields(Number(name))?.[1]) === pid) children.push(Number(name));
  }
  return children.sort((a, b) => a - b);
}

export function isAlive(pid: number): boolean {
  const state = statFields(pid)?.[0];
  return state !== undefined && state !== 'Z' && state !== 'X';
}

export interface ProcessSample {
  pid: number;
  /** Open file descriptors (entries of /proc/<pid>/fd). */
  fds: number;
  /** Resident memory (VmRSS), KiB. */
  rssKiB: number;
  threads: number;
  /** User plus system CPU time so far, in clock ticks (100 a second on Linux). */
  cpuTicks: number;
}

/** One look at a process; undefined when it is gone (a worker killed a moment ago). */
export function sampleProcess(pid: number): ProcessSample | undefined {
  try {
    const fds = readdirSync(`/proc/${pid}/fd`).length;
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
    const stat = statFields(pid);
    // utime and stime are fields 14 and 15 of stat.
    const cpuTicks = stat ? Number(stat[11]) + Number(stat[12]) : NaN;
    return { pid, fds, rssKiB: field('VmRSS'), threads: field('Threads'), cpuTicks };
  } catch {
    return undefined;
  }
}

export function median(values: number[]): number {
  return percentile(values, 50);
}

/** The nearest-rank percentile `p` (0-100) of `values`; NaN when there are none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The slope of the least-squares line through (xs, ys); NaN with fewer than two points. */
export function slope(xs: number[], ys: number[]): number {
  const n = Math.min(xs.length, ys.length);
  if (n < 2) return NaN;
  const mx = xs.slice(0, n).reduce((a, b) => a + b, 0) / n;
  const my = ys.slice(0, n).reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? NaN : num / den;
}

export interface Growth {
  /** Median of the samples in the first minute from the start of the window. */
  first: number;
  /** Median of the samples in the last minute. */
  last: number;
  /** Least-squares slope, per minute. */
  perMinute: number;
  samples: number;
}

/** How a series grew over the samples at or after `fromMs` (ms since the start of the load): first-vs-last minute medians and a fitted slope. */
export function growth(points: { t: number; v: number }[], fromMs: number): Growth {
  const window = points.filter((p) => p.t >= fromMs && Number.isFinite(p.v));
  if (window.length === 0) return { first: NaN, last: NaN, perMinute: NaN, samples: 0 };
  const start = window[0]!.t;
  const end = window[window.length - 1]!.t;
  const first = window.filter((p) => p.t < start + 60_000).map((p) => p.v);
  const last = window.filter((p) => p.t > end - 60_000).map((p) => p.v);
  return {
    first: median(first),
    last: median(last),
    perMinute: slope(
      window.map((p) => p.t / 60_000),
      window.map((p) => p.v),
    ),
    samples: window.length,
  };
}
