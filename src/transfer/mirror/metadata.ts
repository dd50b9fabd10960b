import { createHash } from 'node:crypto';
import { readdir, rm, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { DEPOT_PATHS, MIRROR_PARTIAL_TAG, TEMP_PREFIX } from '../../constants.js';
import { isUpgradeMetadataPath } from '../../depot/upgrade-metadata.js';
import { depotFileUrl } from '../../util/depot-url.js';
import { DepotkitError, EXIT, errorMessage } from '../../util/errors.js';
import { MIRROR_LIMITS } from '../../util/limits.js';
import { formatBytes } from '../../util/text.js';
import { PositionalWriter } from '../io.js';
import { type Answer, type Connection, TooLarge, authFailure, boundedBody, discard, get, watchProgress } from './connection.js';
import { FileFailure } from './failure.js';
import { DepotFiles, type Written } from './local.js';
import { eachLimited } from '../../util/limit.js';

/** A metadata file fetched into a temporary file beside its final path, to be put in place (or dropped) at the end. */
export interface FetchedFile {
  /** Web-root-relative. */
  path: string;
  temp: string;
  sha256: string;
  written: Written;
}

/** The bound of each metadata file, by its name (the copies under PROD/metadata/ have their original's). */
export function metadataLimit(path: string): number {
  const name = basename(path);
  if (path === DEPOT_PATHS.catalog) return MIRROR_LIMITS.catalogBytes;
  if (isUpgradeMetadataPath(path)) return MIRROR_LIMITS.upgradeMetadataBytes;
  const byName: [string, number][] = [
    [DEPOT_PATHS.catalogSig, MIRROR_LIMITS.signatureBytes],
    [DEPOT_PATHS.manifest, MIRROR_LIMITS.manifestBytes],
    [DEPOT_PATHS.compatibility, MIRROR_LIMITS.compatibilityBytes],
    [DEPOT_PATHS.hclAll, MIRROR_LIMITS.hclBytes],
    [DEPOT_PATHS.hclLastUpdated, MIRROR_LIMITS.hclTimestampBytes],
  ];
  return byName.find(([p]) => basename(p) === name)?.[1] ?? MIRROR_LIMITS.manifestBytes;
}

/** Why a metadata file could not be read, in one sentence that ends the mirror. */
function unreadable(conn: Connection, path: string, err: unknown): Error {
  if (err instanceof DepotkitError) return err;
  const url = depotFileUrl(conn.depot, path);
  if (err instanceof TooLarge)
    return new DepotkitError(`${url} is larger than ${formatBytes(err.limit)} (${err.message}): not depot metadata; nothing of it was kept.`, EXIT.problems);
  if (err instanceof FileFailure) return new DepotkitError(`${path} cannot be written: ${err.message}.`, EXIT.problems);
  return new DepotkitError(`${url} could not be read: ${errorMessage(err)}.`, EXIT.problems, 'Run the same command again; nothing was put in place yet.');
}

/** The answer to a metadata request when it is 200; undefined on 404; an error for anything else. */
async function answered(conn: Connection, path: string, res: Answer): Promise<Answer | undefined> {
  if (res.statusCode === 200) return res;
  await discard(res);
  if (res.statusCode === 404) return undefined;
  if (res.statusCode === 401 || res.statusCode === 403) throw authFailure(conn, res.statusCode);
  throw new DepotkitError(`${depotFileUrl(conn.depot, path)} answered ${res.statusCode}.`, EXIT.problems);
}

/**
 * The catalog, held in memory (it is parsed whole) up to its bound; it proves
 * the server is a depot, and that trust and credentials work, before anything
 * is written locally.
 */
export async function fetchCatalog(conn: Connection): Promise<Buffer> {
  const path = DEPOT_PATHS.catalog;
  const watch = watchProgress(conn);
  try {
    const res = await answered(conn, path, await get(conn, path, {}, watch));
    if (!res)
      throw new DepotkitError(
        `${depotFileUrl(conn.depot, path)} answered 404: no depot is served there.`,
        EXIT.problems,
        'Give the URL of the folder that contains PROD/ (the one an installer is given).',
      );
    const chunks: Buffer[] = [];
    for await (const chunk of boundedBody(res, MIRROR_LIMITS.catalogBytes, watch)) chunks.push(chunk);
    return Buffer.concat(chunks);
  } catch (err) {
    throw unreadable(conn, path, err);
  } finally {
    watch.stop();
  }
}

/** A small body (the server's status, a folder listing) when the answer is 200; undefined otherwise. */
export async function fetchSmall(conn: Connection, path: string, max: number, headers: Record<string, string> = {}): Promise<Buffer | undefined> {
  const watch = watchProgress(conn);
  try {
    const res = await get(conn, path, headers, watch);
    if (res.statusCode !== 200) {
      await discard(res);
      return undefined;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of boundedBody(res, max, watch)) chunks.push(chunk);
    return Buffer.concat(chunks);
  } catch (err) {
    throw unreadable(conn, path, err);
  } finally {
    watch.stop();
  }
}

/** Bytes of metadata still allowed in this mirror. */
export class MetadataBudget {
  private used = 0;
  take(n: number): void {
    this.used += n;
    if (this.used > MIRROR_LIMITS.totalMetadataBytes)
      throw new DepotkitError(
        `The server's metadata is larger than ${formatBytes(MIRROR_LIMITS.totalMetadataBytes)} in all, more than a depot's metadata archive may hold: not a depot's.`,
        EXIT.problems,
      );
  }
}

/** Writes `chunks` to a new temporary file beside `path`'s final place, hashing them as they are written. */
export async function writeTemp(
  files: DepotFiles,
  path: string,
  chunks: AsyncIterable<Buffer> | Iterable<Buffer>,
  budget?: MetadataBudget,
): Promise<FetchedFile> {
  await files.folder(dirname(path));
  const { path: temp, handle } = await files.createTemp(join(files.root, path));
  const hash = createHash('sha256');
  try {
    const writer = new PositionalWriter(handle);
    for await (const chunk of chunks) {
      budget?.take(chunk.length);
      hash.update(chunk);
      await writer.write(chunk);
    }
    await writer.flush();
    return { path, temp, sha256: hash.digest('hex'), written: await DepotFiles.finish(handle) };
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw err;
  }
}

async function fetchToTemp(conn: Connection, files: DepotFiles, path: string, budget: MetadataBudget): Promise<FetchedFile | undefined> {
  const watch = watchProgress(conn);
  try {
    const res = await answered(conn, path, await get(conn, path, {}, watch));
    return res && (await writeTemp(files, path, boundedBody(res, metadataLimit(path), watch), budget));
  } catch (err) {
    throw unreadable(conn, path, err);
  } finally {
    watch.stop();
  }
}

/**
 * Fetches metadata files into temporary files, `concurrency` at a time, each
 * within its bound and all within the budget. On a failure, what was
 * fetched is removed before the error is thrown.
 */
export async function fetchMetadataFiles(
  conn: Connection,
  files: DepotFiles,
  paths: readonly string[],
  concurrency: number,
  budget: MetadataBudget,
): Promise<{ fetched: FetchedFile[]; absent: string[] }> {
  const fetched: FetchedFile[] = [];
  const absent: string[] = [];
  try {
    await eachLimited(paths, concurrency, async (path) => {
      const file = await fetchToTemp(conn, files, path, budget);
      if (file) fetched.push(file);
      else absent.push(path);
    });
  } catch (err) {
    await dropTemps(fetched);
    throw err;
  }
  return { fetched, absent };
}

export async function dropTemps(files: readonly FetchedFile[]): Promise<void> {
  for (const f of files) await rm(f.temp, { force: true });
}

/**
 * Temporary files a killed mirror left in the folders its metadata goes to
 * (the depot's lock is held: no other run is writing them); partial
 * downloads are kept, for the next download to resume.
 */
export async function clearLeftTemps(files: DepotFiles, paths: readonly string[]): Promise<void> {
  for (const dir of new Set(paths.map((p) => dirname(join(files.root, p))))) {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      // unlink() removes a link itself, never what it points to.
      if (name.startsWith(TEMP_PREFIX) && !name.startsWith(`${TEMP_PREFIX}${MIRROR_PARTIAL_TAG}`)) await unlink(join(dir, name)).catch(() => undefined);
    }
  }
}
