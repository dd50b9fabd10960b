import { readFile, stat } from 'node:fs/promises';
import { basename, join, resolve, sep } from 'node:path';
import { DEPOT_ROOT_DIR, TEMP_PREFIX } from '../constants.js';
import { usageError } from '../util/errors.js';
import { foldersUpTo, isDirectory, syncDir, writeFileAtomic } from '../util/fs.js';
import { listFiles } from '../util/walk.js';

/** The files under the folders of binaries, by file name (several downloads may share one). */
export async function indexBinaries(folders: string[], out: string): Promise<Map<string, string[]>> {
  const index = new Map<string, string[]>();
  for (const folder of folders) {
    if (!(await isDirectory(folder))) throw usageError(`${folder}, given as a folder of binaries, is not a folder.`);
    const files = await listFiles(folder, { name: (name) => !name.startsWith(TEMP_PREFIX) });
    for (const file of files.map((rel) => join(resolve(folder), rel))) {
      // The depot being built may sit inside a downloads folder: its own files are not sources.
      if (file === out || file.startsWith(`${out}/`)) continue;
      const name = basename(file);
      index.set(name, [...(index.get(name) ?? []), file]);
    }
  }
  return index;
}

/** The size of the regular file at `path`, or undefined when there is none. */
export async function sizeOf(path: string): Promise<number | undefined> {
  try {
    const info = await stat(path);
    return info.isFile() ? info.size : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Lays out the metadata byte for byte, refusing to replace different files
 * without `force`. Each file is flushed before its rename; the folders (and
 * the ones above, which may be new) are synced once at the end, not once per
 * file: an archive may hold thousands of upgrade metadata files.
 */
export async function layoutMetadata(files: Map<string, Buffer>, out: string, force: boolean): Promise<{ written: string[]; unchanged: string[] }> {
  const written: string[] = [];
  const unchanged: string[] = [];
  const conflicts: string[] = [];
  const toWrite: [string, Buffer][] = [];
  const webRoot = `${resolve(out, DEPOT_ROOT_DIR)}${sep}`;
  for (const [path, data] of files) {
    // The metadata reader keeps names under PROD/; a file must never land outside it.
    if (!resolve(out, path).startsWith(webRoot)) throw usageError(`The metadata file ${path} would leave ${webRoot}: refused.`);
    let current: Buffer | undefined;
    try {
      current = await readFile(join(out, path));
    } catch {
      current = undefined;
    }
    if (current?.equals(data)) unchanged.push(path);
    else {
      if (current && !force) conflicts.push(path);
      toWrite.push([path, data]);
    }
  }
  if (conflicts.length) {
    throw usageError(
      `${out} already holds different metadata (${conflicts.slice(0, 3).join(', ')}${conflicts.length > 3 ? `, and ${conflicts.length - 3} more` : ''}).`,
      'Use `force` to replace it with the metadata given, or choose another `out`.',
    );
  }
  const folders = new Set<string>();
  for (const [path, data] of toWrite) {
    await writeFileAtomic(join(out, path), data, { force: true, syncFolder: false });
    for (const folder of foldersUpTo(join(out, path), out)) folders.add(folder);
    written.push(path);
  }
  for (const folder of folders) await syncDir(folder);
  return { written, unchanged };
}
