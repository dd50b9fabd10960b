import { constants as fsConstants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { componentDir } from '../../constants.js';
import type { CatalogEntry } from '../../depot/catalog-entries.js';
import type { VerifiedEntry } from './sources.js';
import type { FileState, StatusComponent, StatusFile, StatusSummary } from './types.js';

type FileLook = Pick<StatusFile, 'state' | 'actualSize' | 'hashVerified'>;

/** How each catalogued file is: one stat each, nothing hashed. */
export type LookAtFile = (path: string, size: number, checksum: string) => Promise<FileLook>;

/** One catalogued file: there with the catalog's size and readable, and hashed before without change since. */
async function lookAt(dir: string, realDir: string, path: string, size: number, checksum: string, verified: Record<string, VerifiedEntry>): Promise<FileLook> {
  const full = join(dir, path);
  let info;
  try {
    info = await stat(full);
  } catch {
    return { state: 'missing', hashVerified: false };
  }
  if (!info.isFile()) return { state: 'missing', hashVerified: false };
  if (info.size !== size) return { state: 'wrong-size', actualSize: info.size, hashVerified: false };
  try {
    await access(full, fsConstants.R_OK);
  } catch {
    return { state: 'unreadable', hashVerified: false };
  }
  const entry = verified[full] ?? verified[join(realDir, path)];
  const hashVerified = entry !== undefined && entry.sha256 === checksum && entry.size === info.size && entry.mtimeMs === info.mtimeMs && entry.ino === info.ino;
  return { state: 'present', hashVerified };
}

/**
 * Looks at each distinct file once, however many versions name it. A file that is not here and that the depot's
 * recorded selection did not choose (`chosen`) is left out, not missing.
 */
export function fileLooker(dir: string, realDir: string, verified: Record<string, VerifiedEntry>, chosen?: ReadonlySet<string>): LookAtFile {
  const seen = new Map<string, Promise<FileLook>>();
  return (path, size, checksum) => {
    const key = `${path}\0${size}\0${checksum}`;
    let found = seen.get(key);
    if (!found) {
      found = lookAt(dir, realDir, path, size, checksum, verified).then((look) =>
        look.state === 'missing' && chosen && !chosen.has(path) ? { ...look, state: 'left-out' as const } : look,
      );
      seen.set(key, found);
    }
    return found;
  };
}

/** A catalog entry as the page lists it: its files, each once. */
export async function componentOf(e: CatalogEntry, look: LookAtFile): Promise<StatusComponent> {
  const files: StatusFile[] = [];
  for (const b of e.binaries) {
    const path = `${componentDir(e.component)}/${b.fileName}`;
    if (files.some((f) => f.path === path)) continue;
    files.push({ name: b.fileName, path, size: b.size, ...(await look(path, b.size, b.checksum)) });
  }
  return { name: e.component, version: e.productVersion, ...(e.releaseDate !== undefined ? { releaseDate: e.releaseDate } : {}), inCatalog: true, files };
}

/** The counts over every distinct file the catalog names; complete only when the catalog could be used. */
export async function summaryOf(entries: CatalogEntry[], look: LookAtFile, catalogUsable: boolean): Promise<StatusSummary> {
  const distinct = new Map<string, { size: number; look: FileLook }>();
  for (const e of entries) {
    for (const b of e.binaries) {
      const path = `${componentDir(e.component)}/${b.fileName}`;
      if (!distinct.has(path)) distinct.set(path, { size: b.size, look: await look(path, b.size, b.checksum) });
    }
  }
  const all = [...distinct.values()];
  const count = (state: FileState) => all.filter((f) => f.look.state === state).length;
  return {
    complete: catalogUsable && all.some((f) => f.look.state === 'present') && all.every((f) => f.look.state === 'present' || f.look.state === 'left-out'),
    files: all.length,
    present: count('present'),
    missing: count('missing'),
    wrongSize: count('wrong-size'),
    unreadable: count('unreadable'),
    leftOut: count('left-out'),
    hashVerified: all.filter((f) => f.look.hashVerified).length,
    bytes: all.reduce((sum, f) => sum + f.size, 0),
    presentBytes: all.filter((f) => f.look.state === 'present').reduce((sum, f) => sum + f.size, 0),
  };
}
