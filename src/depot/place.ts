import { chmod, copyFile, link, open, readFile, rename, rm, stat, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DepotkitError, describeFsError, isEnvironmentError } from '../util/errors.js';
import { tempPathFor, writeJsonAtomic } from '../util/fs.js';
import { sha256Files } from '../util/hash.js';

export type PlaceMode = 'copy' | 'hardlink' | 'symlink';
export const PLACE_MODES: readonly PlaceMode[] = ['copy', 'hardlink', 'symlink'];

/**
 * Puts `source` at `dest` through a temporary name beside it: a reader of
 * `dest` sees the old file or the whole new one, never a partial one.
 * In copy mode the source is hashed while the kernel copies it (two threads),
 * and the copy is only renamed into place when the hash matches.
 */
export async function placeFile(
  source: string,
  dest: string,
  mode: PlaceMode,
  expectedSha256: string | undefined,
  onBytes?: (n: number) => void,
): Promise<{ placed: true } | { placed: false; actualSha256: string }> {
  const temp = tempPathFor(dest);
  try {
    let actual: string | undefined;
    if (mode === 'copy') {
      const [hashes] = await Promise.all([
        expectedSha256 ? sha256Files([source], { concurrency: 1, onBytes }) : Promise.resolve(undefined),
        copyFile(source, temp),
      ]);
      // The source is hashed (the kernel's copy is trusted): one read of the data, not two.
      actual = hashes?.[0]?.sha256;
      if (hashes?.[0]?.error) throw hashes[0].error;
      // A download kept private (0600) must still be readable by the web server's user.
      await chmod(temp, 0o644);
      // Durable before it becomes visible: a crash must not leave an empty file at `dest`.
      const handle = await open(temp, 'r+');
      await handle.datasync();
      await handle.close();
    } else {
      if (expectedSha256) actual = (await sha256Files([source], { concurrency: 1, onBytes }))[0]?.sha256;
      if (actual === undefined || actual === expectedSha256) {
        if (mode === 'hardlink') await link(source, temp);
        else await symlink(source, temp);
      }
    }
    if (expectedSha256 && actual !== expectedSha256) {
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
      throw new DepotkitError(`Cannot hard-link ${source} into ${dirname(dest)}: they are on different file systems.`, 2, 'Use --mode copy or --mode symlink.');
    }
    // A full disk or quota is about where it was writing; anything else, about what it was reading.
    throw describeFsError(err, isEnvironmentError(err) ? dest : source);
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

  async remember(path: string, sha256: string): Promise<void> {
    const info = await stat(path);
    this.entries[path] = { size: info.size, mtimeMs: info.mtimeMs, ino: info.ino, sha256 };
  }

  async save(): Promise<void> {
    await writeJsonAtomic(this.file, this.entries, { force: true });
  }
}

export function stateFileFor(out: string): string {
  return join(out, '.depotkit', 'verified.json');
}
