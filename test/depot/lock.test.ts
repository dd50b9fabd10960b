import { spawn } from 'node:child_process';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockDepot, lockFileFor, withDepotLock } from '../../src/depot/lock.js';
import { tempDir } from '../helpers/cli.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

/** A pid that was a process of this machine a moment ago and is gone now. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => child.on('exit', r));
  return child.pid!;
}

describe('depot lock', () => {
  it('lets one run in and refuses a second with a sentence naming the holder, until the first releases', async () => {
    const first = await lockDepot(dir, 'depot unpack');
    await expect(lockDepot(dir, 'depot mirror')).rejects.toThrow(new RegExp(`being written by another run: depot unpack \\(process ${process.pid} on `));
    await first.release();
    const second = await lockDepot(dir, 'depot mirror');
    expect(JSON.parse(await readFile(lockFileFor(dir), 'utf8'))).toMatchObject({ pid: process.pid, operation: 'depot mirror' });
    await second.release();
    await expect(readFile(lockFileFor(dir))).rejects.toThrow(/ENOENT/);
  });

  it('takes over the lock of a process that is gone, and says whose it was', async () => {
    const pid = await deadPid();
    await mkdir(`${dir}/.depotkit`, { recursive: true });
    await writeFile(lockFileFor(dir), JSON.stringify({ pid, host: hostname(), operation: 'depot build', startedAt: '2026-01-01T00:00:00.000Z' }));
    const lock = await lockDepot(dir, 'depot unpack');
    expect(lock.tookOverFrom).toMatchObject({ pid, operation: 'depot build' });
    await lock.release();
  });

  it('does not take over a lock of another machine (its process cannot be asked)', async () => {
    await mkdir(`${dir}/.depotkit`, { recursive: true });
    await writeFile(lockFileFor(dir), JSON.stringify({ pid: 1, host: 'another-host', operation: 'depot mirror', startedAt: 'x' }));
    await expect(lockDepot(dir, 'depot unpack')).rejects.toThrow(/depot mirror \(process 1 on another-host/);
  });

  it('releases the lock when the work fails', async () => {
    await expect(withDepotLock(dir, 'depot build', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await (await lockDepot(dir, 'depot build')).release();
  });

  it('lets exactly one of many runs racing for a stale lock have it', async () => {
    const pid = await deadPid();
    await mkdir(`${dir}/.depotkit`, { recursive: true });
    await writeFile(lockFileFor(dir), JSON.stringify({ pid, host: hostname(), operation: 'depot build', startedAt: 'x' }));
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => lockDepot(dir, 'depot unpack')));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });
});
