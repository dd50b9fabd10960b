import { createHash } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DEPOT_PATHS } from '../../constants.js';
import type { Checkpoints } from '../../depot/place.js';
import { DepotkitError, EXIT } from '../../util/errors.js';
import { readChunks } from '../io.js';
import { FileFailure } from './failure.js';
import type { DepotFiles } from './local.js';
import { type FetchedFile, dropTemps, metadataLimit } from './metadata.js';

/**
 * SHA-256 of the depot's own file at `file`; undefined when there is none,
 * or it is not a regular file (a link is not followed), or it is larger than
 * `max` (then it differs from anything fetched within the bound).
 */
export async function hashLocal(file: string, max: number): Promise<string | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > max) return undefined;
    const hash = createHash('sha256');
    for await (const chunk of readChunks(handle, 0, info.size)) hash.update(chunk);
    return hash.digest('hex');
  } finally {
    await handle.close();
  }
}

/** Sorts fetched metadata into what differs from the depot's own and what does not (whose temporary files go). */
export async function splitUnchanged(files: DepotFiles, fetched: readonly FetchedFile[]): Promise<{ changed: FetchedFile[]; unchanged: string[] }> {
  const changed: FetchedFile[] = [];
  const unchanged: string[] = [];
  for (const f of fetched) {
    if ((await hashLocal(join(files.root, f.path), metadataLimit(f.path))) === f.sha256) unchanged.push(f.path);
    else changed.push(f);
  }
  await dropTemps(fetched.filter((f) => !changed.includes(f)));
  return { changed, unchanged: unchanged.sort() };
}

/** Depot mirror's order: everything else first and the catalog last, since the catalog is what makes a new release visible to an installer. */
const catalogLast = (path: string): number => Number(path === DEPOT_PATHS.catalog);

/**
 * Puts changed metadata in place, group by group in the order of `rank` (lowest first); each group is
 * made durable (its folders synced) and remembered before the next. Returns the paths written.
 */
export async function placeMetadata(
  files: DepotFiles,
  checkpoints: Checkpoints,
  changed: readonly FetchedFile[],
  rank: (path: string) => number = catalogLast,
): Promise<string[]> {
  const order = [...changed].sort((a, b) => rank(a.path) - rank(b.path) || a.path.localeCompare(b.path));
  const written: string[] = [];
  try {
    for (const step of new Set(order.map((f) => rank(f.path)))) {
      for (const f of order.filter((o) => rank(o.path) === step)) {
        const final = join(files.root, f.path);
        await files.place(f.temp, final, f.written);
        written.push(f.path);
        await checkpoints.state.remember(final, f.sha256);
        checkpoints.renamedInto([dirname(final)]);
      }
      await checkpoints.save();
    }
  } catch (err) {
    await dropTemps(order.filter((f) => !written.includes(f.path)));
    if (err instanceof FileFailure)
      throw new DepotkitError(`${order.find((f) => !written.includes(f.path))?.path} was not put in place: ${err.message}.`, EXIT.problems);
    throw err;
  }
  return written;
}
