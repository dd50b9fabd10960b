import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { respawnDelayMs } from '../../src/server/respawn.js';
import { childPids, spawnServe, useServeRuns } from './helpers.js';
import { until } from '../helpers/poll.js';

describe('serve: replacing workers that die', () => {
  const runs = useServeRuns();
  const { children } = runs;

  it('waits longer after each worker that dies young: at once, then 1, 2, 4 ... seconds, never more than 30', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map(respawnDelayMs)).toEqual([0, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });

  it('backs off while workers cannot start (the root is gone), says why once, and serves again when it is back', async () => {
    const { root } = runs;
    // Every process of the server (the primary and each worker it forks inherit NODE_OPTIONS) notes its pid and
    // start time in a file: a count of forks that polling cannot miss, however short-lived they are.
    const starts = join(runs.dir, 'starts');
    const mark = join(runs.dir, 'mark.cjs');
    await writeFile(starts, '');
    await writeFile(mark, `require('node:fs').appendFileSync(${JSON.stringify(starts)}, process.pid + ' ' + Date.now() + '\\n');\n`);
    const serve = await spawnServe([root, '--host', '127.0.0.1', '--port', '0', '--http', '--workers', '2'], { NODE_OPTIONS: `--require ${mark}` });
    children.push(serve);
    const primary = serve.child.pid!;
    const [first] = await childPids(primary);
    /** Start times of the workers forked after the first, in order. */
    const replacements = async () =>
      (await readFile(starts, 'utf8'))
        .trim()
        .split('\n')
        .map((line) => line.split(' ').map(Number) as [number, number])
        .filter(([pid]) => pid !== primary && pid !== first)
        .map(([, at]) => at);
    await rename(root, join(runs.dir, 'gone'));
    process.kill(first!, 'SIGKILL');
    await until(replacements, (times) => times.length >= 3, 'three replacements', { timeoutMs: 30_000, everyMs: 50 });
    // The first at once, the second 1 s after the first died, the third 2 s after the second: at least 3 s from the
    // first to the third, however slow the machine (a loop without a pause forked one every ~110 ms).
    const times = await replacements();
    expect(times.length).toBeGreaterThanOrEqual(3);
    expect(times[2]! - times[0]!).toBeGreaterThanOrEqual(2500);
    const why = serve.stderr().match(/could not start: .*does not exist/g) ?? [];
    expect(why).toHaveLength(1);
    expect(serve.stderr()).toMatch(/each wait doubles \(up to 30 s\) and this is not repeated/);
    // The root is back: the next attempt (4 s later at most) serves, and says so.
    await rename(join(runs.dir, 'gone'), root);
    await serve.waitForStderr(/a server worker is serving again/);
    expect((await childPids(primary)).length).toBe(1);
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
  });
});
