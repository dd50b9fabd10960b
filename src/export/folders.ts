import { chown } from 'node:fs/promises';
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
