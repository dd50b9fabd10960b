import { execFileSync, spawn } from 'node:child_process';
import { readFile, writeFile, mkdir, symlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockDepot, lockFileFor, withDepotLock } from '../../src/depot/lock.js';
import { processIdentity } from '../../src/util/process-identity.js';
import { useTempDir } from '../helpers/temp.js';
import { deadPid } from '../helpers/process.js';

const tmp = useTempDir(undefined, { each: true });

describe('depot lock', () => {
  it('lets one run in and refuses a second with a sentence naming the holder, until the first releases', async () => {
    const first = await lockDepot(tmp.dir, 'depot unpack');
    await expect(lockDepot(tmp.dir, 'depot mirror')).rejects.toThrow(new RegExp(`being written by another run: depot unpack \\(process ${process.pid} on `));
    await first.release();
    const second = await lockDepot(tmp.dir, 'depot mirror');
    expect(JSON.parse(await readFile(lockFileFor(tmp.dir), 'utf8'))).toMatchObject({ pid: process.pid, operation: 'depot mirror' });
    await second.release();
    await expect(readFile(lockFileFor(tmp.dir))).rejects.toThrow(/ENOENT/);
  });

  it('takes over the lock of a process that is gone, and says whose it was', async () => {
    const pid = await deadPid();
    await mkdir(`${tmp.dir}/.depotkit`, { recursive: true });
    await writeFile(lockFileFor(tmp.dir), JSON.stringify({ pid, host: hostname(), operation: 'depot build', startedAt: '2026-01-01T00:00:00.000Z' }));
    const lock = await lockDepot(tmp.dir, 'depot unpack');
    expect(lock.tookOverFrom).toMatchObject({ pid, operation: 'depot build' });
    await lock.release();
  });

  it('does not take over a lock of another machine (its process cannot be asked)', async () => {
    await mkdir(`${tmp.dir}/.depotkit`, { recursive: true });
    await writeFile(lockFileFor(tmp.dir), JSON.stringify({ pid: 1, host: 'another-host', operation: 'depot mirror', startedAt: 'x' }));
    await expect(lockDepot(tmp.dir, 'depot unpack')).rejects.toThrow(/depot mirror \(process 1 on another-host/);
  });

  it('releases the lock when the work fails', async () => {
    await expect(withDepotLock(tmp.dir, 'depot build', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await (await lockDepot(tmp.dir, 'depot build')).release();
  });

  it('lets exactly one of many runs racing for a stale lock have it', async () => {
    const pid = await deadPid();
    await mkdir(`${tmp.dir}/.depotkit`, { recursive: true });
    await writeFile(lockFileFor(tmp.dir), JSON.stringify({ pid, host: hostname(), operation: 'depot build', startedAt: 'x' }));
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => lockDepot(tmp.dir, 'depot unpack')));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  it('records its holder beyond the pid (boot and start time), and takes over a lock whose pid now belongs to another process', async () => {
    const own = await lockDepot(tmp.dir, 'depot build');
    const me = await processIdentity(process.pid);
    expect(me.bootId).toMatch(/^[0-9a-f-]{36}$/);
    expect(me.startTicks).toBeGreaterThan(0);
    expect(JSON.parse(await readFile(lockFileFor(tmp.dir), 'utf8'))).toMatchObject({ pid: process.pid, bootId: me.bootId, startTicks: me.startTicks });
    await own.release();

    // A live process holds each pid below, but not the one that wrote the lock: it started at another moment, or in another boot.
    const alive = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)']);
    try {
      const { startTicks } = await processIdentity(alive.pid!);
      const reused = { pid: alive.pid!, host: hostname(), operation: 'depot build', startedAt: 'x' };
      for (const recorded of [
        { bootId: me.bootId, startTicks: startTicks! - 1 },
        { bootId: '00000000-0000-4000-8000-000000000000', startTicks },
      ]) {
        await writeFile(lockFileFor(tmp.dir), JSON.stringify({ ...reused, ...recorded }));
        const lock = await lockDepot(tmp.dir, 'depot unpack');
        expect(lock.tookOverFrom).toMatchObject({ pid: alive.pid, operation: 'depot build' });
        await lock.release();
      }
      // Its own identity, or none recorded (a lock of an earlier version): the holder may be running, the lock stays.
      for (const recorded of [{ bootId: me.bootId, startTicks }, {}]) {
        await writeFile(lockFileFor(tmp.dir), JSON.stringify({ ...reused, ...recorded }));
        await expect(lockDepot(tmp.dir, 'depot unpack')).rejects.toThrow(`depot build (process ${alive.pid} on ${hostname()}, since x)`);
      }
    } finally {
      alive.kill();
    }
  });

  it('refuses at once a lock that is a link to /dev/zero or a FIFO: never read whole, never waited on', { timeout: 20_000 }, async () => {
    const [zero, fifo] = [join(tmp.dir, 'zero'), join(tmp.dir, 'fifo')];
    for (const root of [zero, fifo]) await mkdir(join(root, '.depotkit'), { recursive: true });
    const path = lockFileFor(zero);
    await symlink('/dev/zero', path);
    await expect(lockDepot(zero, 'depot unpack')).rejects.toMatchObject({
      exitCode: 2,
      message: `${path} is a symbolic link, not a regular file: it is not a depot lock.`,
      fix: `depotkit writes its lock as a small regular file: remove ${path}, then run the command again.`,
    });
    execFileSync('mkfifo', [lockFileFor(fifo)]);
    await expect(lockDepot(fifo, 'depot unpack')).rejects.toThrow(`${lockFileFor(fifo)} is a FIFO, not a regular file: it is not a depot lock.`);
  });
});
