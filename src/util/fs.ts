import { createHash, randomBytes } from 'node:crypto';
import { chmod, chown, link, lstat, mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { TEMP_PREFIX } from '../constants.js';
import { DepotkitError, describeFsError, usageError } from './errors.js';

/** The longest file name, in bytes, that Linux file systems take (NAME_MAX). */
export const NAME_MAX_BYTES = 255;
/** The random part of a temporary name: 12 hex digits and a dash. */
const TEMP_RANDOM_LENGTH = 13;
/** What a final name's trace in a temporary name may take: the name fits whole, or is cut and ends in `~` and 8 hex digits of its SHA-256. */
const TEMP_NAME_ROOM = NAME_MAX_BYTES - Buffer.byteLength(TEMP_PREFIX) - TEMP_RANDOM_LENGTH;

/** The first code points of `text` that fit in `maxBytes` of UTF-8 (a character is never cut in two). */
function utf8Prefix(text: string, maxBytes: number): string {
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    bytes += Buffer.byteLength(char);
    if (bytes > maxBytes) break;
    end += char.length;
  }
  return text.slice(0, end);
}

/**
 * The part of a temporary name that stands for the final name `name`: the
 * name itself when it fits beside the prefix and the random part, otherwise
 * its start and a short hash of the whole, so that two long names sharing a
 * start still get different temporary names.
 */
function tempNamePart(name: string): string {
  return nameWithin(name, TEMP_NAME_ROOM);
}

/** `name` when it fits in `room` bytes, else its start and `~` and 8 hex digits of its SHA-256: two long names sharing a start stay apart. */
export function nameWithin(name: string, room: number): string {
  if (Buffer.byteLength(name) <= room) return name;
  const digest = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${utf8Prefix(name, room - 9)}~${digest}`;
}

/** A temporary path beside `finalPath`, so the final rename stays on one file system; its name fits NAME_MAX whatever the final name. */
export function tempPathFor(finalPath: string): string {
  return join(dirname(finalPath), `${TEMP_PREFIX}${randomBytes(6).toString('hex')}-${tempNamePart(basename(finalPath))}`);
}

/** The folders from `path`'s own up to `root` (included): the ones whose entries a new file below `root` may have changed. */
export function foldersUpTo(path: string, root: string): string[] {
  const folders: string[] = [];
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    folders.push(dir);
    if (dir === root || dirname(dir) === dir) return folders;
  }
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
  /**
   * Sync the folder after the rename, so that the new name survives a power
   * cut (default). A caller writing many files turns it off and syncs each
   * folder once at the end.
   */
  syncFolder?: boolean;
}

/**
 * Writes `data` to a temporary name, flushes it, then renames it into place:
 * a reader never sees a partial file at `path`, and a failure leaves nothing.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, options: WriteOptions = {}): Promise<void> {
  if (!options.force && (await exists(path))) {
    throw usageError(`${path} already exists.`, 'Use `force` to replace it.');
  }
  const temp = tempPathFor(path);
  const mode = options.mode ?? 0o644;
  let made: string | undefined;
  try {
    made = await mkdir(dirname(path), { recursive: true });
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
    await renameInto(temp, path, options.force ?? false);
  } catch (err) {
    await rm(temp, { force: true });
    throw writeFailure(err, path);
  }
  // The file's new name, and the folders made for it, in their parents.
  if (options.syncFolder ?? true) for (const folder of foldersUpTo(path, made ? dirname(made) : dirname(path))) await syncDir(folder);
}

/** Renames a finished temporary file to `path`; without `force` through link(), which fails when a file appeared there: never replaced unasked. */
export async function renameInto(temp: string, path: string, force: boolean): Promise<void> {
  if (force) return rename(temp, path);
  await link(temp, path);
  await rm(temp, { force: true });
}

/** What a failed write to `path` says: the file that was there already (and `force`), or the file system's failure. */
export function writeFailure(err: unknown, path: string): DepotkitError {
  if ((err as NodeJS.ErrnoException).code === 'EEXIST') return usageError(`${path} already exists.`, 'Use `force` to replace it.');
  return describeFsError(err, path);
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
      throw usageError(`${dir} already exists and is not empty.`, 'Use `force` to write into it.');
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      if (err instanceof DepotkitError) throw err;
      throw describeFsError(err, dir);
    }
    await mkdir(dir, { recursive: true });
  }
}

/**
 * Makes `dir` and its missing parents with exactly `mode`: made with it (the umask may only narrow it then),
 * then set (a private folder is 0700 whatever the umask). A folder that is there already keeps its mode.
 * Answers whether `dir` was made.
 */
export async function makeDir(dir: string, mode: number): Promise<boolean> {
  try {
    const made = await mkdir(dir, { recursive: true, mode });
    if (made === undefined) return false;
    for (let folder = resolve(dir); ; folder = dirname(folder)) {
      await chmod(folder, mode);
      if (folder === resolve(made) || dirname(folder) === folder) return true;
    }
  } catch (err) {
    throw describeFsError(err, dir);
  }
}

// The bounded readers live in their own module; importers keep reading them from here.
export { readFileBounded, readInto } from './bounded-read.js';

/** Where the previous version of a file waits while a set of files is replaced. */
export const BACKUP_SUFFIX = '.bak';

export interface FileToWrite {
  path: string;
  data: string | Uint8Array;
  /** File mode, e.g. 0o600 for private keys; 0o644 by default. */
  mode?: number;
  /** Owner and group, given before the file takes its name (those of a file replaced, which a server reads as another user). */
  owner?: { uid: number; gid: number };
}

export interface FileSetOptions {
  /** Replace existing files. Without it an existing file is an error and nothing is written. */
  force?: boolean;
  /**
   * Whether the files now at the final paths belong together (a key and its
   * certificate). Asked only when `.bak` files are left from an interrupted
   * replacement: when the current set is whole, the leftovers are removed;
   * otherwise (or without this check) the replacement is refused, since the
   * `.bak` files may be the only whole set.
   */
  currentSetIsWhole?: () => Promise<boolean>;
}

/** Whether `a` and `b` name one file (a link, or one path spelt twice); false when either is missing. */
export async function sameFile(a: string, b: string): Promise<boolean> {
  try {
    const [x, y] = await Promise.all([stat(a), stat(b)]);
    return x.ino === y.ino && x.dev === y.dev;
  } catch {
    return false;
  }
}

/** Makes renames in `dir` durable; some file systems cannot sync a folder, which is no reason to fail. */
export async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Best effort.
  }
}

/**
 * Writes files that only work together (a private key and its certificate)
 * so that a failure or a crash at any point leaves a whole set, the old one
 * or the new one, never the new key beside the old certificate:
 *
 * 1. every new file is written to a temporary name and flushed (a full disk
 *    fails here, before any final path is touched);
 * 2. with `force`, every existing file is hard-linked to `<name>.bak`, so the
 *    old set stays whole there;
 * 3. each new file is renamed into place (without `force`: linked, which
 *    fails if a file appeared meanwhile);
 * 4. the `.bak` files are removed.
 *
 * A failure in 3 puts the old files back. After a crash in 3 the `.bak` files
 * hold the old set; the next replacement refuses to run over them unless the
 * files in place are whole (`currentSetIsWhole`).
 */
export async function writeFileSetAtomic(files: FileToWrite[], options: FileSetOptions = {}): Promise<void> {
  const force = options.force ?? false;
  // One temporary file per path: a path given twice would leave one of them (a copy of a private key) behind.
  const twice = files.find((f, i) => files.findIndex((g) => resolve(g.path) === resolve(f.path)) !== i);
  if (twice) throw usageError(`${twice.path} is given twice in one set of files to write.`);
  const existing: string[] = [];
  for (const f of files) if (await exists(f.path)) existing.push(f.path);
  if (!force && existing.length > 0) throw usageError(`${existing[0]} already exists.`, 'Use `force` to replace it.');
  if (force)
    await clearBackups(
      files.map((f) => f.path),
      options.currentSetIsWhole,
    );

  const dirs = [...new Set(files.map((f) => dirname(f.path)))];
  for (const dir of dirs) {
    try {
      await mkdir(dir, { recursive: true });
    } catch (err) {
      throw describeFsError(err, dir);
    }
  }
  await removeTempFilesOf(files.map((f) => f.path));
  const temps = new Map<string, string>();
  const backups: [final: string, backup: string][] = [];
  const placed: string[] = [];
  let current = files[0]?.path ?? '';
  try {
    for (const f of files) {
      current = f.path;
      const temp = tempPathFor(f.path);
      temps.set(f.path, temp);
      const mode = f.mode ?? 0o644;
      const handle = await open(temp, 'wx', mode);
      try {
        await handle.writeFile(f.data);
        await handle.sync();
      } finally {
        await handle.close();
      }
      // Before the mode: a change of owner may clear mode bits. The umask may have narrowed the mode; a private key must be exactly 0600.
      if (f.owner) await chown(temp, f.owner.uid, f.owner.gid);
      await chmod(temp, mode);
    }
    if (force) {
      for (const path of existing) {
        current = path;
        await link(path, `${path}${BACKUP_SUFFIX}`);
        backups.push([path, `${path}${BACKUP_SUFFIX}`]);
      }
      for (const dir of dirs) await syncDir(dir);
    }
    for (const f of files) {
      current = f.path;
      if (force) await rename(temps.get(f.path)!, f.path);
      else await link(temps.get(f.path)!, f.path);
      placed.push(f.path);
    }
    for (const dir of dirs) await syncDir(dir);
  } catch (err) {
    // Put the old set back: the files replaced get their previous version, new ones go.
    for (const path of placed.reverse()) {
      const backup = backups.find(([final]) => final === path)?.[1];
      await (backup ? rename(backup, path) : rm(path, { force: true })).catch(() => undefined);
    }
    for (const [, backup] of backups) await rm(backup, { force: true }).catch(() => undefined);
    for (const temp of temps.values()) await rm(temp, { force: true }).catch(() => undefined);
    if ((err as NodeJS.ErrnoException).code === 'EEXIST' && !force) throw usageError(`${current} already exists.`, 'Use `force` to replace it.');
    if (err instanceof DepotkitError) throw err;
    throw describeFsError(err, current);
  }
  // Linked temporary names (without force) and the previous versions are no longer needed.
  for (const temp of temps.values()) await rm(temp, { force: true });
  for (const [, backup] of backups) await rm(backup, { force: true });
}

/** Temporary files an interrupted run left for these paths: one may hold a copy of a private key. */
async function removeTempFilesOf(paths: string[]): Promise<void> {
  for (const dir of new Set(paths.map((p) => dirname(p)))) {
    const names = new Set(paths.filter((p) => dirname(p) === dir).map((p) => tempNamePart(basename(p))));
    for (const entry of await readdir(dir).catch(() => [] as string[])) {
      const match = /^[0-9a-f]{12}-(.+)$/.exec(entry.slice(TEMP_PREFIX.length));
      if (isTempName(entry) && match && names.has(match[1]!)) await rm(join(dir, entry), { force: true });
    }
  }
}

/**
 * `.bak` files left by an interrupted replacement. They are judged as a set:
 * when every one is still a link to the file in place, nothing had been
 * replaced yet and they go; when the files in place are whole, the
 * replacement had finished and they go; otherwise they may be the only whole
 * set, and the replacement is refused.
 */
async function clearBackups(paths: string[], currentSetIsWhole: (() => Promise<boolean>) | undefined): Promise<void> {
  const left: [final: string, backup: string][] = [];
  for (const path of paths) if (await exists(`${path}${BACKUP_SUFFIX}`)) left.push([path, `${path}${BACKUP_SUFFIX}`]);
  if (left.length === 0) return;
  let stale = true;
  for (const [final, backup] of left) stale &&= await sameFile(final, backup);
  if (!stale && currentSetIsWhole) stale = await currentSetIsWhole().catch(() => false);
  if (stale) {
    for (const [, backup] of left) await rm(backup, { force: true });
    return;
  }
  const names = left.map(([, backup]) => backup);
  throw usageError(
    `${names.join(' and ')} ${names.length === 1 ? 'is' : 'are'} left from a replacement that was interrupted, and the files in place may not belong together.`,
    `Keep the set that belongs together under the names without ${BACKUP_SUFFIX} (e.g. mv ${names[0]} ${left[0]![0]}), remove the other ${BACKUP_SUFFIX} files, then run the command again.`,
  );
}

/** The text of the file at `path`, or undefined when there is none (a state file not yet written). */
export async function readTextIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw describeFsError(err, path);
  }
}

/** A sentence when the file at `path` can be read by its group or by others (a private key, a password file); undefined otherwise. */
export async function exposedFileWarning(path: string): Promise<string | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile()) return undefined;
  const mode = info.mode & 0o777;
  if (!(mode & 0o077)) return undefined;
  return `${path} is readable by ${mode & 0o007 ? 'others' : 'its group'} (mode ${mode.toString(8).padStart(4, '0')}); run chmod 600 ${path}.`;
}
