import { chown, stat } from 'node:fs/promises';
import { dirname, relative } from 'node:path';
import { describeFsError } from '../util/errors.js';
import { makeDir } from '../util/fs.js';

/** The folders an export makes: the server's group reads them, nobody else (0750 whatever the umask). */
export const EXPORT_DIR_MODE = 0o750;

/**
 * Makes the folders under `out` (itself included) that the files at `paths` go to, 0750; a folder that is
 * there already keeps its mode and group. Those made get the server's group `gid` when this process may give
 * it; the others are answered, for the user to change.
 */
export async function makeExportFolders(out: string, paths: string[], gid: number | undefined): Promise<{ ungrouped: string[] }> {
  const inside = (dir: string) => dir === out || !relative(out, dir).startsWith('..');
  // Parents first, so that each is made (or found) before what goes in it.
  const folders = [...new Set([out, ...paths.map(dirname).filter(inside)])].sort((a, b) => a.length - b.length);
  const ungrouped: string[] = [];
  for (const folder of folders) {
    if (!(await makeDir(folder, EXPORT_DIR_MODE))) continue;
    if (gid === undefined) {
      ungrouped.push(folder);
      continue;
    }
    try {
      await chown(folder, -1, gid);
    } catch (err) {
      throw describeFsError(err, folder);
    }
  }
  return { ungrouped };
}

/**
 * The folders above `paths` that a server running as its own user (in group `gid`, when known) cannot pass
 * through: neither searchable by all nor by that group. Caddy reads the certificate and key so; `cert issue`
 * makes their folder 0700.
 */
export async function foldersClosedTo(paths: string[], gid: number | undefined): Promise<string[]> {
  const closed = new Set<string>();
  for (const path of paths) {
    for (let dir = dirname(path); ; dir = dirname(dir)) {
      const mode = await stat(dir).then(
        (s) => (s.mode & 0o001 || (s.gid === gid && s.mode & 0o010) ? undefined : s.mode),
        () => undefined,
      );
      if (mode !== undefined) closed.add(dir);
      if (dirname(dir) === dir) break;
    }
  }
  return [...closed].sort();
}
