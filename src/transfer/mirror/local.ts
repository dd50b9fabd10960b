import { type Stats, constants as fsConstants, lstatSync, mkdirSync, renameSync } from 'node:fs';
import { type FileHandle, open, readlink, realpath, unlink } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { MIRROR_PARTIAL_TAG, TEMP_PREFIX } from '../../constants.js';
import { NAME_MAX_BYTES, nameWithin, tempPathFor } from '../../util/fs.js';
import { FileFailure, localFailure } from './failure.js';

/**
 * The mirror's own files in the depot, safe against a local writer who
 * plants links: partial downloads and temporary files are regular files of
 * this user only, opened without following a link; modes are set on the open
 * file; a rename is checked to have moved the very file written. The folders
 * on the way are real folders of the depot, never links out of it.
 */

const { O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = fsConstants;
/** A new file: never one that exists, never through a link. */
const CREATE = O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW;
/** An existing partial file: not through a link; a FIFO planted there must not block the open. */
const RESUME = O_RDWR | O_NOFOLLOW | O_NONBLOCK;

/**
 * Where an interrupted download of `binary` waits to be resumed: beside its
 * final path (the rename stays on one file system), named by its checksum and
 * its name, the name cut (and a hash of it added) where the whole would not
 * fit NAME_MAX.
 */
export function partialPathFor(root: string, binary: { path: string; checksum: string; fileName: string }): string {
  const prefix = `${TEMP_PREFIX}${MIRROR_PARTIAL_TAG}${binary.checksum.slice(0, 16)}-`;
  return join(root, dirname(binary.path), `${prefix}${nameWithin(binary.fileName, NAME_MAX_BYTES - Buffer.byteLength(prefix))}`);
}

const notFound = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * The entry at `path` itself (a link is not followed), or undefined when there is none. Synchronous, as the
 * other metadata calls of the mirror's hot path: a few microseconds each, where a hop through libuv's threads
 * costs two thread switches per call, thousands of times over for a depot of small files.
 */
function lstatIfThere(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (err) {
    if (notFound(err)) return undefined;
    throw localFailure(err, path);
  }
}

/** Why a file found at a partial name is not one to resume, or undefined when it is. */
function unsafeReason(info: Stats): string | undefined {
  if (info.isSymbolicLink()) return 'a link';
  if (!info.isFile()) return 'not a regular file';
  if (info.nlink !== 1) return `a file with ${info.nlink} names (a hard link)`;
  const uid = process.geteuid?.();
  if (uid !== undefined && info.uid !== uid) return `a file of another user (uid ${info.uid})`;
  if (info.mode & 0o022) return 'a file others may write';
  return undefined;
}

/** What a file's identity is after it was written: its inode, checked after the rename. */
export interface Written {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** The depot being written: its folders checked once each, and every file the mirror opens checked to be inside it. */
export class DepotFiles {
  private readonly checked = new Set<string>();

  private constructor(
    readonly root: string,
    private readonly realRoot: string,
  ) {}

  static async open(root: string): Promise<DepotFiles> {
    return new DepotFiles(root, await realpath(root));
  }

  /** Makes (or finds) the folder `relDir` under the root, every step a real folder: a link there is refused. */
  async folder(relDir: string): Promise<void> {
    let rel = '';
    for (const part of relDir.split('/')) {
      rel = rel ? `${rel}/${part}` : part;
      if (this.checked.has(rel)) continue;
      const path = join(this.root, rel);
      try {
        // Made here, under a folder already checked: a real folder of the depot.
        mkdirSync(path, { mode: 0o755 });
        this.checked.add(rel);
        continue;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw localFailure(err, path);
      }
      const info = lstatIfThere(path);
      if (!info) throw new FileFailure(`${rel} vanished as it was made`);
      if (info.isSymbolicLink()) throw new FileFailure(`${rel} is a link, not a folder of the depot: nothing is written through it`);
      if (!info.isDirectory()) throw new FileFailure(`${rel} is a file, not a folder`);
      this.checked.add(rel);
    }
  }

  /** Throws when the open file is not where it was asked for (a folder on the way was swapped for a link meanwhile). */
  private async assertInside(handle: FileHandle, path: string): Promise<void> {
    // Linux names the file behind a descriptor; elsewhere the folder checks stand alone.
    const actual = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
    const expected = join(this.realRoot, relative(this.root, path));
    if (actual !== undefined && actual !== expected) {
      await handle.close();
      throw new FileFailure(`${relative(this.root, path)} led out of the depot (to ${actual}): a folder on the way is a link`);
    }
  }

  /** A new file at `path`, readable by this user only until it is placed. */
  async create(path: string): Promise<FileHandle> {
    const handle = await open(path, CREATE, 0o600).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new FileFailure(`another file appeared at ${relative(this.root, path)} as it was made`);
      throw localFailure(err, path);
    });
    try {
      await this.assertInside(handle, path);
    } catch (err) {
      // Made a moment ago with O_EXCL: the file is ours, wherever the link took it.
      await unlink(path).catch(() => undefined);
      throw err;
    }
    return handle;
  }

  /** A new temporary file beside `finalPath`. */
  async createTemp(finalPath: string): Promise<{ path: string; handle: FileHandle }> {
    const path = tempPathFor(finalPath);
    return { path, handle: await this.create(path) };
  }

  /**
   * The partial download at `path` to resume, or a new one. Anything else
   * found there (a link, a hard link, another user's file, a FIFO) is
   * removed, never followed, and said (`replaced`).
   */
  async openPartial(path: string): Promise<{ handle: FileHandle; have: number; replaced?: string }> {
    const found = lstatIfThere(path);
    let replaced = found && unsafeReason(found);
    if (found && !replaced) {
      const handle = await open(path, RESUME).catch((err: unknown) => {
        if (notFound(err) || (err as NodeJS.ErrnoException).code === 'ELOOP') return undefined;
        throw localFailure(err, path);
      });
      if (handle) {
        // Checked again on the open file: the name may have been swapped since.
        const info = await handle.stat();
        replaced = unsafeReason(info);
        if (!replaced) {
          await this.assertInside(handle, path);
          return { handle, have: info.size };
        }
        await handle.close();
      } else replaced = 'a link';
    }
    if (found) {
      // unlink() removes a link itself, never what it points to.
      await unlink(path).catch((err: unknown) => {
        if (!notFound(err)) throw localFailure(err, path);
      });
    }
    return { handle: await this.create(path), have: 0, ...(replaced ? { replaced } : {}) };
  }

  /**
   * Makes a fully written file readable by all (on the open file) and closes it; durable at once unless
   * `durable` is false, when the caller has it flushed later, before anything vouches for it
   * (`Checkpoints.flushBeforeSave`).
   */
  static async finish(handle: FileHandle, durable = true): Promise<Written> {
    try {
      await handle.chmod(0o644);
      if (durable) await handle.datasync();
      const info = await handle.stat();
      return { dev: info.dev, ino: info.ino, size: info.size, mtimeMs: info.mtimeMs };
    } finally {
      await handle.close();
    }
  }

  /** Whether something (a file, a link, anything) holds the name `path`. */
  taken(path: string): boolean {
    return lstatIfThere(path) !== undefined;
  }

  /** Renames `from` to `to` and checks that `to` is now the very file that was written; when not, it is removed. */
  async place(from: string, to: string, written: Written): Promise<void> {
    try {
      renameSync(from, to);
    } catch (err) {
      throw localFailure(err, to);
    }
    const placed = lstatIfThere(to);
    if (placed?.ino !== written.ino || placed.dev !== written.dev) {
      if (placed && !placed.isDirectory()) await unlink(to).catch(() => undefined);
      throw new FileFailure(`another file took the place of its download before it was renamed into ${relative(this.root, to)}: removed`);
    }
  }
}
