import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { link, mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DepotkitError, EXIT, describeFsError } from '../util/errors.js';
import { exists, readFileBounded, syncDir } from '../util/fs.js';
import { isObject, parseJsonOrUndefined } from '../util/json.js';
import { isAnotherProcess, processIdentity, type ProcessIdentity } from '../util/process-identity.js';

/**
 * One writer per depot. Two runs writing one depot at once corrupt it (one
 * clears the other's temporary files, both write one partial file, saves of
 * the verified state lose entries), so every command that writes a depot
 * holds its lock: a file created with O_EXCL that names the holder. A lock
 * whose process is gone (killed, the machine restarted) is taken over, and
 * the caller is told so: its pid alive again as another process (after a
 * restart) is told apart by the holder's boot and start time. Locks written
 * before those were recorded are judged by the pid alone.
 */
export interface DepotLockHolder extends ProcessIdentity {
  pid: number;
  host: string;
  /** What the holder is doing, in words ("depot mirror"). */
  operation: string;
  startedAt: string;
}

export interface DepotLock {
  path: string;
  /** The dead holder whose lock was taken over, when there was one. */
  tookOverFrom?: DepotLockHolder;
  release(): Promise<void>;
}

export function lockFileFor(root: string): string {
  return join(root, '.depotkit', 'lock');
}

/** Far more than a holder's line. */
const LOCK_MAX_BYTES = 64 * 1024;

function parseHolder(text: string): DepotLockHolder | undefined {
  const value = parseJsonOrUndefined(text);
  if (!isObject(value)) return undefined;
  const { pid, host, operation, startedAt, bootId, startTicks } = value;
  if (typeof pid !== 'number' || typeof host !== 'string' || typeof operation !== 'string' || typeof startedAt !== 'string') return undefined;
  return {
    pid,
    host,
    operation,
    startedAt,
    ...(typeof bootId === 'string' ? { bootId } : {}),
    ...(typeof startTicks === 'number' ? { startTicks } : {}),
  };
}

/**
 * The lock's text, or undefined when there is none. Read as a regular file only, never through a link and
 * never more than a holder's line: a link to /dev/zero or a FIFO put there is refused, not read or waited on.
 */
async function readLock(path: string): Promise<string | undefined> {
  try {
    return (await readFileBounded(path, LOCK_MAX_BYTES, 'depot lock', { noFollow: true })).toString('utf8');
  } catch (err) {
    if (!(await exists(path))) return undefined;
    // A refusal of what is there says how to clear it; a failure of the file system keeps its own hint.
    if (!(err instanceof DepotkitError) || err.fix) throw err;
    throw new DepotkitError(err.message, err.exitCode, `depotkit writes its lock as a small regular file: remove ${path}, then run the command again.`);
  }
}

/** Whether the holder is certainly gone: only a process of this machine can be asked. */
async function holderIsGone(holder: DepotLockHolder | undefined): Promise<boolean> {
  if (!holder) return true;
  if (holder.host !== hostname()) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  // A live pid may be another process's now (a restart, or pids that wrapped round): the holder's boot and start tell.
  return isAnotherProcess(holder.pid, holder);
}

function describeHolder(holder: DepotLockHolder): string {
  return `${holder.operation} (process ${holder.pid} on ${holder.host}, since ${holder.startedAt})`;
}

/**
 * Creates the lock whole: written and flushed under a name of its own, then
 * linked to the lock's name, which fails when a lock is there. A lock file is
 * never seen empty or half written, which would pass for a dead holder's.
 */
async function create(path: string, holder: DepotLockHolder): Promise<boolean> {
  const own = `${path}.${randomBytes(6).toString('hex')}`;
  try {
    const handle = await open(own, 'wx', 0o644);
    try {
      await handle.writeFile(`${JSON.stringify(holder)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(own, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw describeFsError(err, path);
  } finally {
    await rm(own, { force: true });
  }
  await syncDir(dirname(path));
  return true;
}

/**
 * Moves a dead holder's lock aside. Renaming is atomic, so of two runs that
 * both found it stale only one gets it; the other finds the winner's lock
 * (or none) and tries again. A lock that changed since it was judged is put back.
 */
async function removeStale(path: string, judged: string): Promise<void> {
  const aside = `${path}.stale-${randomBytes(6).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw describeFsError(err, path);
  }
  const moved = await readLock(aside).catch(() => '');
  // A lock put back must not replace one taken meanwhile: link() fails when there is one.
  if (moved !== judged) await link(aside, path).catch(() => undefined);
  await rm(aside, { force: true });
}

/**
 * Takes the lock of the depot at `root` for `operation`, or refuses with a
 * sentence naming the run that holds it.
 */
export async function lockDepot(root: string, operation: string): Promise<DepotLock> {
  const path = lockFileFor(root);
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o755 });
  } catch (err) {
    throw describeFsError(err, dirname(path));
  }
  const holder: DepotLockHolder = {
    pid: process.pid,
    host: hostname(),
    operation,
    startedAt: new Date().toISOString(),
    ...(await processIdentity(process.pid)),
  };
  let tookOverFrom: DepotLockHolder | undefined;
  for (let attempt = 0; attempt < 5; attempt++) {
    if (await create(path, holder)) {
      const text = `${JSON.stringify(holder)}\n`;
      return {
        path,
        ...(tookOverFrom ? { tookOverFrom } : {}),
        release: async () => {
          // Only our own lock goes: a lock taken over meanwhile (we were thought dead) stays.
          if ((await readLock(path).catch(() => '')) === text) await rm(path, { force: true });
        },
      };
    }
    const text = await readLock(path);
    if (text === undefined) continue;
    const current = parseHolder(text);
    if (!(await holderIsGone(current))) {
      throw new DepotkitError(
        `${root} is being written by another run: ${describeHolder(current!)}.`,
        EXIT.usage,
        `Wait for it to finish, or stop it; a lock left by a process that is gone is taken over by the next run (${path}).`,
      );
    }
    tookOverFrom = current ?? { pid: 0, host: 'unknown', operation: 'an unreadable lock', startedAt: 'unknown' };
    await removeStale(path, text);
  }
  throw new DepotkitError(`Could not take the lock of ${root} (${path}): other runs keep taking it.`, EXIT.usage);
}

/** Runs `work` holding the depot's lock, and releases it whatever happens. */
export async function withDepotLock<T>(root: string, operation: string, work: (lock: DepotLock) => Promise<T>): Promise<T> {
  const lock = await lockDepot(root, operation);
  try {
    return await work(lock);
  } finally {
    await lock.release();
  }
}
