import { statfs } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { DepotkitError, EXIT } from './errors.js';
import { formatBytes } from './text.js';

/**
 * Bytes an unprivileged writer may still use on the file system holding
 * `path` (the nearest folder that exists: the target may not be made yet).
 */
export async function freeBytes(path: string): Promise<number> {
  let at = resolve(path);
  for (;;) {
    try {
      const s = await statfs(at);
      return s.bavail * s.bsize;
    } catch (err) {
      const parent = dirname(at);
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || parent === at) throw err;
      at = parent;
    }
  }
}

/** The exact bytes beside their size in words, so that both the number and its order are read at once. */
function describeBytes(n: number): string {
  return `${n} bytes (${formatBytes(n)})`;
}

/**
 * Stops before anything is written when `needed` bytes do not fit on the file
 * system of `path`: the environment's failure (exit 3), with both numbers.
 * `freed`: bytes of files there that the operation removes first (an earlier
 * output it replaces), counted as free.
 */
export async function ensureSpace(path: string, needed: number, what: string, freed = 0): Promise<{ needed: number; free: number }> {
  const free = (await freeBytes(path)) + freed;
  if (needed > free) {
    const replaced = freed ? ` (with the ${describeBytes(freed)} of the files it replaces)` : '';
    throw new DepotkitError(
      `${what} needs ${describeBytes(needed)} in ${resolve(path)} but its file system has ${describeBytes(free)} free${replaced}; nothing was written.`,
      EXIT.environment,
      'Free some space there, or choose a target on a larger disk, and run the command again.',
    );
  }
  return { needed, free };
}
