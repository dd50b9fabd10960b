import { stat } from 'node:fs/promises';
import { dirname, relative } from 'node:path';
import { usageError } from '../../util/errors.js';
import { escapeControlChars } from '../../util/text.js';
import type { PackFile } from '../format.js';
import type { TargetDepot } from '../target.js';

export interface Plan {
  /** Files to read from the volumes. */
  needed: PackFile[];
  /** Already in place and verified (from the verified state, or hashed once and remembered). */
  alreadyInPlace: PackFile[];
  bytesHashedInPlace: number;
}

/** The folders above `path` inside the depot, nearest first. */
function* foldersAbove(target: TargetDepot, path: string): Generator<string> {
  for (let dir = dirname(target.path(path)); relative(target.root, dir) !== ''; dir = dirname(dir)) yield dir;
}

/**
 * What is already here (remembered as verified, or the same size and then
 * hashed once) and what must be read. Different files at the pack's paths
 * are replaced only when `mayReplace` says so for their kind (metadata that
 * moves the depot forward may be replaced where binaries may not); a folder where a file goes, or a file
 * where a folder must be made, is never replaced: both are refused (exit 2)
 * before anything is written.
 */
export async function planFiles(target: TargetDepot, files: readonly PackFile[], mayReplace: (file: PackFile) => boolean): Promise<Plan> {
  const plan: Plan = { needed: [], alreadyInPlace: [], bytesHashedInPlace: 0 };
  const toHash: PackFile[] = [];
  const conflicts: string[] = [];
  const blockers: string[] = [];
  // Whether each folder is one or can be made; a folder that is one (or is absent) has only folders above it.
  const folders = new Map<string, boolean>();
  const blocked = async (file: PackFile) => {
    for (const dir of foldersAbove(target, file.path)) {
      let ok = folders.get(dir);
      if (ok === undefined) {
        const info = await stat(dir).then(
          (i) => i.isDirectory(),
          (err: NodeJS.ErrnoException) => err.code === 'ENOENT',
        );
        folders.set(dir, (ok = info));
        if (ok) continue;
      }
      return !ok;
    }
    return false;
  };
  for (const file of files) {
    if (await target.inPlace(file.path, file.sha256)) {
      plan.alreadyInPlace.push(file);
      continue;
    }
    const info = await stat(target.path(file.path)).catch(() => undefined);
    if ((info && !info.isFile()) || (await blocked(file))) blockers.push(file.path);
    else if (info && info.size === file.size) toHash.push(file);
    else if (info && !mayReplace(file)) conflicts.push(file.path);
    else plan.needed.push(file);
  }
  if (toHash.length) {
    plan.bytesHashedInPlace = toHash.reduce((s, f) => s + f.size, 0);
    const same = await target.adopt(toHash.map((f) => ({ path: f.path, sha256: f.sha256 })));
    for (const file of toHash) {
      if (same.has(file.path)) plan.alreadyInPlace.push(file);
      else if (mayReplace(file)) plan.needed.push(file);
      else conflicts.push(file.path);
    }
  }
  const listed = (paths: string[]) => `${paths.slice(0, 3).map(escapeControlChars).join(', ')}${paths.length > 3 ? ', ...' : ''}`;
  if (blockers.length) {
    throw usageError(
      `${target.root} holds a folder where the pack has a file, or a file where the pack needs a folder, at ${blockers.length} of its paths (${listed(blockers)}).`,
      'Move them out of the depot; unpack replaces files, never folders.',
    );
  }
  if (conflicts.length) {
    throw usageError(
      `${target.root} already holds different files at ${conflicts.length} of the pack's paths (${listed(conflicts)}), and its catalog is neither this pack's nor its base's.`,
      'Unpack into the depot the pack was made for (or an empty folder), or use `force` to replace them.',
    );
  }
  return plan;
}
