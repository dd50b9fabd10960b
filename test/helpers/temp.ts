import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');

/** A fresh temporary folder, removed by the returned cleanup. */
export async function tempDir(prefix = 'depotkit-test-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A file's temporary folder, made before its tests and removed after them. */
export interface Scratch {
  /** The folder (read it in a hook or a test, not while the file is collected). */
  readonly dir: string;
  /** A path in it no other call returned: `name-0`, `name-1` ... */
  fresh(name: string): string;
}

/** Registers the hooks that make and remove a temporary folder for the tests of the file (or describe) it is called in. */
export function scratch(prefix: string): Scratch {
  let dir: string | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  let n = 0;
  beforeAll(async () => void ({ dir, cleanup } = await tempDir(prefix)));
  afterAll(() => cleanup?.());
  const made = (): string => {
    if (dir === undefined) throw new Error('scratch: the folder is made in beforeAll; read it from a hook or a test.');
    return dir;
  };
  return {
    get dir() {
      return made();
    },
    fresh: (name) => join(made(), `${name}-${n++}`),
  };
}
