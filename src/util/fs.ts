import { randomBytes } from 'node:crypto';
import { chmod, link, lstat, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { TEMP_PREFIX } from '../constants.js';
import { DepotkitError, describeFsError, usageError } from './errors.js';

/** A temporary path beside `finalPath`, so the final rename stays on one file system. */
export function tempPathFor(finalPath: string): string {
  return join(dirname(finalPath), `${TEMP_PREFIX}${randomBytes(6).toString('hex')}-${basename(finalPath)}`);
}

export function isTempName(name: string): boolean {
  return name.startsWith(TEMP_PREFIX);
}

export async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

export async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

export interface WriteOptions {
  /** File mode, e.g. 0o600 for private keys. */
  mode?: number;
  /** Replace an existing file. Without it an existing file is an error. */
  force?: boolean;
}

/**
 * Writes `data` to a temporary name, flushes it, then renames it into place:
 * a reader never sees a partial file at `path`, and a failure leaves nothing.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, options: WriteOptions = {}): Promise<void> {
  if (!options.force && (await exists(path))) {
    throw usageError(`${path} already exists.`, 'Use --force to replace it.');
  }
  const temp = tempPathFor(path);
  const mode = options.mode ?? 0o644;
  try {
    await mkdir(dirname(path), { recursive: true });
  } catch (err) {
    throw describeFsError(err, dirname(path));
  }
  try {
    const handle = await open(temp, 'wx', mode);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    // The umask may have narrowed the mode; a private key must be exactly 0600.
    await chmod(temp, mode);
    if (options.force) {
      await rename(temp, path);
    } else {
      // link() fails if a file appeared at `path` since the check above: never replaced unasked.
      await link(temp, path);
      await rm(temp, { force: true });
    }
  } catch (err) {
    await rm(temp, { force: true });
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw usageError(`${path} already exists.`, 'Use --force to replace it.');
    throw describeFsError(err, path);
  }
}

export async function writeJsonAtomic(path: string, value: unknown, options: WriteOptions = {}): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, options);
}

/** Refuses to reuse a non-empty output folder unless `force` is set. */
export async function prepareOutputDir(dir: string, force: boolean): Promise<void> {
  try {
    const info = await stat(dir);
    if (!info.isDirectory()) throw usageError(`${dir} exists and is not a folder.`);
    const entries = await readdir(dir);
    if (entries.length > 0 && !force) {
      throw usageError(`${dir} already exists and is not empty.`, 'Use --force to write into it.');
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      if (err instanceof DepotkitError) throw err;
      throw describeFsError(err, dir);
    }
    await mkdir(dir, { recursive: true });
  }
}
