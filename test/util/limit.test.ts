import { describe, expect, it } from 'vitest';
import { eachLimited, limiter } from '../../src/util/limit.js';

/** A piece of work that ends when told, and counts how many run at once. */
function gate() {
  let active = 0;
  let most = 0;
  const open: Array<() => void> = [];
  const work = async (): Promise<void> => {
    active++;
    most = Math.max(most, active);
    await new Promise<void>((resolve) => open.push(resolve));
    active--;
  };
  return { work, most: () => most, release: () => open.shift()?.(), waiting: () => open.length };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('limiter', () => {
  it('runs so many at a time in the order given, and a finished one hands its slot to the next waiting', async () => {
    const limit = limiter(2);
    const g = gate();
    const order: number[] = [];
    const all = [1, 2, 3, 4, 5].map((n) => limit(async () => (order.push(n), g.work())));
    await settled();
    expect(g.waiting()).toBe(2);
    g.release();
    // Work given right as a slot frees waits behind the work that waited for it.
    const late = limit(async () => (order.push(6), g.work()));
    await settled();
    expect(g.waiting()).toBe(2);
    while (g.waiting() > 0) {
      g.release();
      await settled();
    }
    await Promise.all([...all, late]);
    expect(g.most()).toBe(2);
    expect(order).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('passes on what the work returns or throws, a throw not taking the slot with it', async () => {
    const limit = limiter(1);
    await expect(limit(async () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    await expect(limit(async () => 7)).resolves.toBe(7);
  });
});

describe('eachLimited', () => {
  it('takes an item from the iterator only once a slot is free, and stops taking them after the first error', async () => {
    let taken = 0;
    function* items() {
      for (let i = 0; i < 1_000; i++) {
        taken++;
        yield i;
      }
    }
    const g = gate();
    const done = eachLimited(items(), 3, async (i) => {
      await g.work();
      if (i === 4) throw new Error('item 4');
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    await settled();
    expect(taken).toBe(3);
    while (g.waiting() > 0) {
      g.release();
      await settled();
    }
    expect(await done).toEqual(new Error('item 4'));
    expect(g.most()).toBe(3);
    expect(taken).toBeLessThan(10);
  });
});
