import { createHash } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { type FileHandle, access, copyFile, link, lstat, open, readFile, rename, rm, stat, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DEPOT_STATE_DIR } from '../constants.js';
import { PositionalWriter, readChunks } from '../util/chunked-io.js';
import { DepotkitError, EXIT, describeFsError, isEnvironmentError } from '../util/errors.js';
import { syncDir, tempPathFor, writeJsonAtomic } from '../util/fs.js';
import { sha256Files } from '../util/hash.js';
import { eachLimited } from '../util/limit.js';

export type PlaceMode = 'copy' | 'hardlink' | 'symlink';
export const PLACE_MODES: readonly PlaceMode[] = ['copy', 'hardlink', 'symlink'];

export type PlaceResult = { placed: true } | { placed: false; actualSha256: string; actualSize?: number };

/**
 * Opens the source once, for everything read of it. O_NONBLOCK: a source
 * swapped for a FIFO must not block the build until some writer appears (it
 * changes nothing for a regular file). Links are followed: a downloads folder
 * may hold them.
 */
async function openSource(source: string): Promise<{ handle: FileHandle; size: number; ino: number; dev: number }> {
  const handle = await open(source, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new DepotkitError(`${source} is no longer a regular file: refused.`, EXIT.usage);
    return { handle, size: info.size, ino: info.ino, dev: info.dev };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** Reads `size` bytes of `handle` once, hashing each chunk and writing it to `temp`: what is hashed is what is written (where /proc is not there). */
async function copyHashing(handle: FileHandle, size: number, temp: string, onBytes?: (n: number) => void): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  // A download kept private (0600) must still be readable by the web server's user.
  const out = await open(temp, 'wx', 0o644);
  try {
    const writer = new PositionalWriter(out);
    for await (const chunk of readChunks(handle, 0, size)) {
      hash.update(chunk);
      await writer.write(chunk);
      bytes += chunk.length;
      onBytes?.(chunk.length);
    }
    await writer.flush();
    await out.chmod(0o644);
    // Durable before it becomes visible: a crash must not leave an empty file at `dest`.
    await out.datasync();
  } finally {
    await out.close();
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** Whether the kernel can open a file by its descriptor's /proc name (Linux with /proc mounted). */
let procFds: Promise<boolean> | undefined;
const haveProcFds = () =>
  (procFds ??= access('/proc/self/fd').then(
    () => true,
    () => false,
  ));

/**
 * Copies in the kernel from the file opened, by its descriptor's /proc name
 * (the path may name another file by now), then hashes the copy: what is
 * hashed is what will be renamed into place. The copy is read back from the
 * page cache by a worker thread while the next file is being copied.
 */
async function copyThenHash(handle: FileHandle, temp: string, onBytes?: (n: number) => void): Promise<string> {
  await copyFile(`/proc/self/fd/${handle.fd}`, temp, fsConstants.COPYFILE_EXCL);
  const [hashed] = await sha256Files([temp], { concurrency: 1, onBytes });
  if (hashed?.error) throw hashed.error;
  const out = await open(temp, 'r+');
  try {
    // A download kept private (0600) must still be readable by the web server's user.
    await out.chmod(0o644);
    // Durable before it becomes visible: a crash must not leave an empty file at `dest`.
    await out.datasync();
  } finally {
    await out.close();
  }
  return hashed!.sha256!;
}

async function hashHandle(handle: FileHandle, size: number, onBytes?: (n: number) => void): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of readChunks(handle, 0, size)) {
    hash.update(chunk);
    onBytes?.(chunk.length);
  }
  return hash.digest('hex');
}

/**
 * Puts `source` at `dest` through a temporary name beside it: a reader of
 * `dest` sees the old file or the whole new one, never a partial one. The
 * source is opened once: a copy is hashed from the very bytes written, and a
 * link must name the file that was hashed, so a local writer changing or
 * swapping the source meanwhile gets a wrong checksum, never its bytes placed
 * as verified. The caller makes the rename durable (`syncDir` of the folder,
 * once for a group of files).
 */
export async function placeFile(
  source: string,
  dest: string,
  mode: PlaceMode,
  expected: { sha256?: string; size?: number },
  onBytes?: (n: number) => void,
): Promise<PlaceResult> {
  const temp = tempPathFor(dest);
  let opened: Awaited<ReturnType<typeof openSource>> | undefined;
  try {
    const hash = expected.sha256 !== undefined;
    if (mode === 'copy' || hash) opened = await openSource(source);
    if (opened && expected.size !== undefined && opened.size !== expected.size) return { placed: false, actualSha256: '', actualSize: opened.size };
    let actual: string | undefined;
    if (mode === 'copy') {
      // Either way a file that changed or shrank while copied gets the hash of what was copied.
      if (await haveProcFds()) actual = await copyThenHash(opened!.handle, temp, onBytes);
      else actual = (await copyHashing(opened!.handle, opened!.size, temp, onBytes)).sha256;
    } else {
      if (hash) actual = await hashHandle(opened!.handle, opened!.size, onBytes);
      if (actual === expected.sha256) {
        if (mode === 'hardlink') await link(source, temp);
        else await symlink(source, temp);
        // The name may have been given to another file since it was opened and hashed.
        if (opened && !(await names(temp, mode, opened))) actual = '';
      }
    }
    if (hash && actual !== expected.sha256) {
      await rm(temp, { force: true });
      return { placed: false, actualSha256: actual ?? '' };
    }
    await rename(temp, dest);
    // rename() leaves both names when they are links to one file (a re-linked hard link).
    await rm(temp, { force: true });
    return { placed: true };
  } catch (err) {
    await rm(temp, { force: true });
    if (err instanceof DepotkitError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EXDEV') {
      throw new DepotkitError(
        `Cannot hard-link ${source} into ${dirname(dest)}: they are on different file systems.`,
        2,
        'Place with `mode` copy or symlink instead.',
      );
    }
    // A full disk or quota is about where it was writing; anything else, about what it was reading.
    throw describeFsError(err, isEnvironmentError(err) ? dest : source);
  } finally {
    await opened?.handle.close();
  }
}

/** Whether the link at `path` (a hard link, or a symbolic one followed) is the file that was opened. */
async function names(path: string, mode: PlaceMode, file: { ino: number; dev: number }): Promise<boolean> {
  const info = await (mode === 'hardlink' ? lstat(path) : stat(path)).catch(() => undefined);
  return info !== undefined && info.ino === file.ino && info.dev === file.dev;
}

/** How often, at most, build saves its progress: the folders of the files placed are synced and the verified state written. */
export const CHECKPOINT_EVERY_MS = 1000;

/** Flushes at once: libuv's four threads, so that the file system can commit several in one go. */
const FLUSHES_AT_ONCE = 4;

/** Flushes a placed file's data to disk; one gone since (removed, replaced) is nothing to flush. */
async function flushFile(path: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP') return;
    throw describeFsError(err, path);
  }
  try {
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

/**
 * Makes placed files survive a power cut and remembered, in batches: the
 * folders renamed into are synced (once per folder, not once per file) and
 * then the verified state is saved whole, at most once every `everyMs`, so
 * that saving stays cheap whatever the number of files, and an interrupted
 * run still keeps most of what it verified.
 */
export class Checkpoints {
  private folders = new Set<string>();
  private unflushed = new Set<string>();
  /** The first file placed is saved at once: a run killed early keeps it too. */
  private last = -Infinity;
  private running: Promise<void> | undefined;

  constructor(
    readonly state: VerifiedState,
    private readonly everyMs = CHECKPOINT_EVERY_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Files were renamed into these folders (and, if verified, remembered in the state). */
  renamedInto(folders: string[]): void {
    for (const folder of folders) this.folders.add(folder);
  }

  /**
   * A file placed without being flushed (it took a name no file held, so a power cut can only lose it, never
   * turn an old file into an empty one): flushed at the next save, before the state vouching for it is written.
   * Flushing in batches lets the disk write thousands of small files in bulk rather than one commit each.
   */
  flushBeforeSave(file: string): void {
    this.unflushed.add(file);
  }

  /** Saves when the last save is old enough; a save already under way is not doubled. */
  async maybeSave(): Promise<void> {
    if (this.running || this.now() - this.last < this.everyMs) return;
    await this.save();
  }

  /** Saves now (at the end of the run). */
  async save(): Promise<void> {
    while (this.running) await this.running;
    this.running = this.write().finally(() => {
      this.running = undefined;
      this.last = this.now();
    });
    await this.running;
  }

  private async write(): Promise<void> {
    const files = [...this.unflushed];
    this.unflushed.clear();
    await eachLimited(files.values(), FLUSHES_AT_ONCE, flushFile);
    const folders = [...this.folders];
    this.folders.clear();
    // Renames first: the state must never vouch for a file a power cut can take back.
    for (const folder of folders) await syncDir(folder);
    await this.state.save();
  }
}

/**
 * Remembers which placed files were verified, by size, mtime and inode, so a
 * re-run skips correct multi-GB files without reading them again.
 */
export class VerifiedState {
  private entries: Record<string, { size: number; mtimeMs: number; ino: number; sha256: string }> = {};
  constructor(private readonly file: string) {}

  static async load(file: string): Promise<VerifiedState> {
    const state = new VerifiedState(file);
    try {
      state.entries = JSON.parse(await readFile(file, 'utf8'));
    } catch {
      // No state yet, or an unreadable one: everything is checked again.
    }
    return state;
  }

  async matches(path: string, sha256: string): Promise<boolean> {
    const entry = this.entries[path];
    if (!entry || entry.sha256 !== sha256) return false;
    try {
      const info = await stat(path);
      return info.size === entry.size && info.mtimeMs === entry.mtimeMs && info.ino === entry.ino;
    } catch {
      return false;
    }
  }

  /** Remembers `path` as verified; `info` is its stat when the caller has it already. */
  async remember(path: string, sha256: string, info?: { size: number; mtimeMs: number; ino: number }): Promise<void> {
    const { size, mtimeMs, ino } = info ?? (await stat(path));
    this.entries[path] = { size, mtimeMs, ino, sha256 };
  }

  async save(): Promise<void> {
    await writeJsonAtomic(this.file, this.entries, { force: true });
  }
}

export function stateFileFor(out: string): string {
  return join(out, DEPOT_STATE_DIR, 'verified.json');
}
