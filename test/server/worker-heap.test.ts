import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { SERVE_WORKER_SEMI_SPACE_MB } from '../../src/server/tuning.js';
import { workerEnv } from '../../src/server/worker-env.js';
import { childPids, spawnServe, useServeRuns, writeTree } from './helpers.js';

/** NODE_OPTIONS as the process `pid` was started with (Linux /proc). */
async function nodeOptionsOf(pid: number): Promise<string | undefined> {
  const environ = (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0');
  return environ.find((v) => v.startsWith('NODE_OPTIONS='))?.slice('NODE_OPTIONS='.length);
}

describe('serve: the young generation of forked serving processes', () => {
  const runs = useServeRuns();
  const { children } = runs;

  it('adds a small semi-space to NODE_OPTIONS, keeping what was there, unless a size was given', () => {
    const flag = `--max-semi-space-size=${SERVE_WORKER_SEMI_SPACE_MB}`;
    expect(workerEnv({ A: '1' }, []).NODE_OPTIONS).toBe(flag);
    expect(workerEnv({ NODE_OPTIONS: '--require x.cjs' }, []).NODE_OPTIONS).toBe(`--require x.cjs ${flag}`);
    expect(workerEnv({ NODE_OPTIONS: '--max-semi-space-size=8' }, []).NODE_OPTIONS).toBe('--max-semi-space-size=8');
    expect(workerEnv({}, ['--max-semi-space-size=8']).NODE_OPTIONS).toBeUndefined();
  });

  it('starts each worker with a small young generation and the primary as it was started', async () => {
    const { root } = runs;
    const serve = await spawnServe([root, '--host', '127.0.0.1', '--port', '0', '--http', '--workers', '2'], { NODE_OPTIONS: '--no-warnings' });
    children.push(serve);
    const [worker] = await childPids(serve.child.pid!);
    expect(await nodeOptionsOf(worker!)).toBe(`--no-warnings --max-semi-space-size=${SERVE_WORKER_SEMI_SPACE_MB}`);
    expect(await nodeOptionsOf(serve.child.pid!)).toBe('--no-warnings');
  });

  it("leaves a size given to the server to the server's workers", async () => {
    const root = await writeTree(join(runs.dir, 'web2'), { [DEPOT_PATHS.catalog]: '{"patches": {}}\n' });
    const serve = await spawnServe([root, '--host', '127.0.0.1', '--port', '0', '--http', '--workers', '2'], { NODE_OPTIONS: '--max-semi-space-size=4' });
    children.push(serve);
    const [worker] = await childPids(serve.child.pid!);
    expect(await nodeOptionsOf(worker!)).toBe('--max-semi-space-size=4');
  });
});
