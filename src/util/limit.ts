/** One limiter of concurrency for the whole tool (no library: the job is a dozen lines). */

/** Runs what it is given, so many at a time, in the order given; resolves or rejects as the work does. */
export type Limit = <T>(work: () => Promise<T>) => Promise<T>;

/** A limit of `concurrency` (at least 1) pieces of work under way at once. */
export function limiter(concurrency: number): Limit {
  const most = Math.max(1, concurrency);
  let active = 0;
  const waiting: Array<() => void> = [];
  return async <T>(work: () => Promise<T>): Promise<T> => {
    if (active < most) active++;
    // A finished piece hands its slot over, so that work started meanwhile cannot take it twice.
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}

/**
 * Runs `work` on each item, `concurrency` at a time, taking the next item from
 * the iterator only once a slot is free (no promise is made per item up front, so
 * memory does not grow with their number). The first error stops new work;
 * it is thrown once the work under way has ended.
 */
export async function eachLimited<T>(items: Iterable<T>, concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  const limit = limiter(concurrency);
  const running = new Set<Promise<void>>();
  let failure: { err: unknown } | undefined;
  for (const item of items) {
    if (failure) break;
    const run: Promise<void> = limit(() => work(item))
      .catch((err: unknown) => void (failure ??= { err }))
      .finally(() => running.delete(run));
    running.add(run);
    if (running.size >= Math.max(1, concurrency)) await Promise.race(running);
  }
  await Promise.all(running);
  if (failure) throw failure.err;
}
