import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { respawnDelayMs } from '../../src/server/workers.js';
import { tempDir } from '../helpers/cli.js';
import { childPids, spawnServe, writeTree, type ServeChild } from './helpers.js';

describe('serve: replacing workers that die', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  const children: ServeChild[] = [];

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir());
  });
  afterAll(async () => {
    for (const c of children) c.child.kill('SIGKILL');
    await cleanup?.();
  });

  it('waits longer after each worker that dies young: at once, then 1, 2, 4 ... seconds, never more than 30', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map(respawnDelayMs)).toEqual([0, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });

  it('backs off while workers cannot start (the root is gone), says why once, and serves again when it is back', async () => {
    const root = await writeTree(join(dir, 'web'), { [DEPOT_PATHS.catalog]: '{"patches": {}}\n' });
    const serve = await spawnServe([root, '--host', '127.0.0.1', '--port', '0', '--http', '--workers', '2']);
    children.push(serve);
    const primary = serve.child.pid!;
    const [first] = await childPids(primary);
    await rename(root, join(dir, 'gone'));
    process.kill(first!, 'SIGKILL');
    // Every process forked in four seconds (a worker that fails to start lives a few hundred milliseconds: seen by polling).
    const forked = new Set<number>();
    for (const end = Date.now() + 4000; Date.now() < end; ) {
      for (const pid of await childPids(primary)) if (pid !== first) forked.add(pid);
      await new Promise((r) => setTimeout(r, 20));
    }
    // At once, after 1 s, after 2 more: three, where a loop without a pause forked a worker every ~110 ms.
    expect(forked.size).toBeGreaterThanOrEqual(2);
    expect(forked.size).toBeLessThanOrEqual(4);
    const why = serve.stderr().match(/could not start: .*does not exist/g) ?? [];
    expect(why).toHaveLength(1);
    expect(serve.stderr()).toMatch(/each wait doubles \(up to 30 s\) and this is not repeated/);
    // The root is back: the next attempt (4 s later at most) serves, and says so.
    await rename(join(dir, 'gone'), root);
    await serve.waitForStderr(/a server worker is serving again/);
    expect((await childPids(primary)).length).toBe(1);
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
  });
});
