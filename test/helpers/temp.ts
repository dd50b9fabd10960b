import { statfsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';

export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');

/** The environment variable naming the machine's own temporary folder to the run's processes (test/setup/temp-in-memory.ts). */
export const DISK_TMPDIR = 'DEPOTKIT_TEST_DISK_TMPDIR';

/** statfs's f_type of tmpfs (linux/magic.h). */
const TMPFS_MAGIC = 0x01021994;

/** Whether `path` is on a tmpfs, whose files live in the page cache itself. */
export function onTmpfs(path: string): boolean {
  return statfsSync(path).type === TMPFS_MAGIC;
}

/** A fresh temporary folder (in `parent`, the run's temporary folder by default), removed by the returned cleanup. */
export async function tempDir(prefix = 'depotkit-test-', parent = tmpdir()): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(parent, prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A fresh temporary folder on the machine's own temporary file system (where TMPDIR pointed before the run),
 * for a test that needs a disk under its files: the suite's other folders are in memory
 * (test/setup/temp-in-memory.ts).
 */
export function diskTempDir(prefix?: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  return tempDir(prefix, process.env[DISK_TMPDIR] ?? tmpdir());
}

/** A temporary folder that a describe block (or file) registered with useTempDir: valid once its tests run. */
export interface UsedTempDir {
  readonly dir: string;
  /** A path in the folder that no other call gave: `<name>-0`, `<name>-1`, ... */
  fresh(name: string): string;
}

/**
 * Registers the hooks that make a temporary folder before the calling block's tests (before each test with
 * `{ each: true }`) and remove it after them. Called first in a block, the folder outlives the block's other
 * after-hooks (vitest runs those in reverse), so servers they stop may still be writing in it.
 */
export function useTempDir(prefix?: string, options: { each?: boolean } = {}): UsedTempDir {
  let tmp: { dir: string; cleanup: () => Promise<void> } | undefined;
  let n = 0;
  const make = async (): Promise<void> => {
    tmp = await tempDir(prefix);
  };
  const remove = async (): Promise<void> => {
    await tmp?.cleanup();
  };
  if (options.each) {
    beforeEach(make);
    afterEach(remove);
  } else {
    beforeAll(make);
    afterAll(remove);
  }
  const dir = (): string => {
    if (!tmp) throw new Error('useTempDir: the folder is made only once the tests run');
    return tmp.dir;
  };
  return {
    get dir() {
      return dir();
    },
    fresh: (name) => join(dir(), `${name}-${n++}`),
  };
}
