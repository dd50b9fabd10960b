/**
 * Runs `work` on each item, `concurrency` at a time, taking the items from
 * the iterator as workers come free (no promise is made per item up front, so
 * memory does not grow with their number). The first error stops new work;
 * it is thrown once the work under way has ended.
 */
export async function eachLimited<T>(items: Iterable<T>, concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  const iterator = items[Symbol.iterator]();
  let failure: { err: unknown } | undefined;
  const worker = async () => {
    while (!failure) {
      const next = iterator.next();
      if (next.done) return;
      try {
        await work(next.value);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  if (failure) throw failure.err;
}
