import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DEPOT_PATHS, HCL_MAX_AGE_DAYS } from '../../constants.js';
import { type CatalogEntry, readCatalogEntries } from '../../depot/catalog-entries.js';
import { hclDate } from '../../depot/hcl.js';
import { type ManifestRelease, readManifestReleases } from '../../depot/manifest-releases.js';
import { stateFileFor } from '../../depot/place.js';
import { errorMessage } from '../../util/errors.js';
import { isObject } from '../../util/json.js';
import type { StatusHcl, StatusSource } from './types.js';

/** Caps on what is read to build the status: far above real files, low enough that a mistaken file is not read whole. */
const READ_LIMITS = { catalog: 64 * 1024 ** 2, manifest: 16 * 1024 ** 2, hclLastUpdated: 1024 ** 2, verifiedState: 64 * 1024 ** 2 } as const;

/** The file's text, or a StatusSource saying why there is none. */
async function readText(path: string, limit: number, shown: string): Promise<string | StatusSource> {
  try {
    const info = await stat(path);
    if (!info.isFile()) return { state: 'missing', message: `${shown} is not a file.` };
    if (info.size > limit) return { state: 'invalid', message: `${shown} is larger than ${limit / 1024 ** 2} MiB.` };
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { state: 'missing', message: `${shown} is missing.` };
    return { state: 'invalid', message: `${shown} cannot be read (${code ?? errorMessage(err)}).` };
  }
}

/** A metadata file read by `read`: its state, and what was read when it is usable. */
async function readSource<T>(dir: string, path: string, limit: number, read: (text: string) => T | string): Promise<{ source: StatusSource; value?: T }> {
  const text = await readText(join(dir, path), limit, path);
  if (typeof text !== 'string') return { source: text };
  const value = read(text);
  return typeof value === 'string' ? { source: { state: 'invalid', message: value } } : { source: { state: 'ok' }, value };
}

/** The catalog's entries (none when it cannot be used) and its state. */
export async function catalogSource(dir: string): Promise<{ source: StatusSource; entries: CatalogEntry[] }> {
  const { source, value } = await readSource(dir, DEPOT_PATHS.catalog, READ_LIMITS.catalog, readCatalogEntries);
  return { source, entries: value ?? [] };
}

/** The manifest's releases (undefined when it cannot be used) and its state. */
export async function manifestSource(dir: string): Promise<{ source: StatusSource; releases?: ManifestRelease[] }> {
  const { source, value } = await readSource(dir, DEPOT_PATHS.manifest, READ_LIMITS.manifest, readManifestReleases);
  return { source, ...(value !== undefined ? { releases: value } : {}) };
}

/** The vSAN HCL's time from lastupdatedtime.json (the small file; all.json is tens of MB and carries the same). */
export async function hclStatus(dir: string): Promise<StatusHcl> {
  const text = await readText(join(dir, DEPOT_PATHS.hclLastUpdated), READ_LIMITS.hclLastUpdated, DEPOT_PATHS.hclLastUpdated);
  if (typeof text !== 'string') return { state: text.state, maxAgeDays: HCL_MAX_AGE_DAYS };
  try {
    const value = JSON.parse(text) as unknown;
    if (!isObject(value) || typeof value.timestamp !== 'number') return { state: 'invalid', maxAgeDays: HCL_MAX_AGE_DAYS };
    const date = hclDate({ timestamp: value.timestamp, jsonUpdatedTime: '' });
    if (Number.isNaN(date.getTime())) return { state: 'invalid', maxAgeDays: HCL_MAX_AGE_DAYS };
    return { state: 'ok', updated: date.toISOString(), maxAgeDays: HCL_MAX_AGE_DAYS };
  } catch {
    return { state: 'invalid', maxAgeDays: HCL_MAX_AGE_DAYS };
  }
}

export interface VerifiedEntry {
  size: number;
  mtimeMs: number;
  ino: number;
  sha256: string;
}

/** What build, unpack and mirror remember of the files they hashed (absolute path -> size, mtime, inode, SHA-256); empty when absent. */
export async function verifiedEntries(root: string): Promise<Record<string, VerifiedEntry>> {
  const text = await readText(stateFileFor(root), READ_LIMITS.verifiedState, 'verified.json');
  if (typeof text !== 'string') return {};
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, VerifiedEntry>) : {};
  } catch {
    return {};
  }
}
