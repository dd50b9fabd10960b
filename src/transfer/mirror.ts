import { createHash, type Hash } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { type FileHandle, chmod, mkdir, open, readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import pLimit from 'p-limit';
import { Agent, request } from 'undici';
import {
  DEPOT_PATHS,
  DEPOT_ROOT_DIR,
  MIRROR_METADATA_PATHS,
  MIRROR_PARTIAL_TAG,
  MIRROR_STATE_FILE,
  TEMP_PREFIX,
  VCENTER_UPGRADE_METADATA_DIR,
} from '../constants.js';
import { type CatalogBinary, CatalogError, catalogBinaries, parseCatalog } from '../depot/catalog.js';
import { stateFileFor } from '../depot/place.js';
import { isUpgradeMetadataPath, upgradeIdsInListing, upgradeMetadataPaths } from '../depot/upgrade-metadata.js';
import { type VerifyResult, verifyDepot } from '../depot/verify.js';
import { type DepotUrl, depotFileUrl, parseDepotUrl } from '../probe/url.js';
import { DepotkitError, EXIT, errorMessage, usageError } from '../util/errors.js';
import { writeFileAtomic, writeJsonAtomic } from '../util/fs.js';
import { isObject, parseJsonOrUndefined } from '../util/json.js';
import { METADATA_LIMITS } from '../util/limits.js';
import { isTlsTrustError } from '../util/tls-errors.js';
import { MIRROR_DEFAULTS } from './defaults.js';
import { readCatalogOf, sha256Hex } from './inventory.js';
import { CHUNK_BYTES, PositionalWriter, readChunks } from './io.js';
import { type ReleaseStatus, releaseStatus } from './releases.js';
import { TargetDepot } from './target.js';

export interface MirrorOptions {
  /** The served depot: the URL an installer is given (the folder that contains PROD/). */
  url: string;
  out: string;
  /** PEM CA certificates to trust (as the installer's own store); Node's public roots when absent. */
  caPems?: string[];
  user?: string;
  password?: string;
  /** Send the credentials over plain HTTP; without it an http:// URL with a user is refused. */
  allowHttpCredentials?: boolean;
  /** Binaries downloaded at once (default 4). */
  concurrency?: number;
  /** Mirror into a folder that holds another depot (not a mirror of this URL). */
  force?: boolean;
  /** Idle time allowed for an answer's headers and between body bytes (default 60 s). */
  timeoutMs?: number;
  /** Attempts after a network failure or a 5xx answer, each resuming where the last stopped (default 3). */
  retries?: number;
  signingCertPem?: string;
  onStart?: (totalBytes: number) => void;
  onBytes?: (n: number) => void;
}

export interface MirrorReport {
  /** Every binary the catalog names is in place and verified, and verify passes. */
  ok: boolean;
  url: string;
  out: string;
  metadata: {
    written: string[];
    unchanged: string[];
    /** Files the installer reads that the server does not have (404). */
    missing: string[];
    /** The server's metadata was not put in place: binaries failed and the depot's own metadata was kept. */
    held: boolean;
  };
  /**
   * vCenter upgrade metadata (PROD/COMP/VCENTER/vmw/<uuid>/), which the catalog does not name: found in the
   * status of `depotkit serve` or in a folder listing, and copied with the metadata; `none` when the server
   * shows neither, and then whatever the source has of it is not mirrored.
   */
  upgradeMetadata: { source: UpgradeMetadataSource; files: number };
  downloaded: { path: string; size: number; resumedFrom: number }[];
  alreadyInPlace: { path: string; size: number }[];
  failed: { path: string; size: number; reason: string }[];
  bytesDownloaded: number;
  /** Bytes of files already here (or of partial downloads) read to be recognised or resumed. */
  bytesHashedLocally: number;
  /** Files in component folders that the catalog no longer names (`depotkit depot prune` removes them). */
  stale: number;
  releases: ReleaseStatus[];
  verify: VerifyResult;
}

/** Metadata files are small; anything far larger is not one. */
const METADATA_MAX_BYTES = 512 * 1024 * 1024;
const RETRY_BASE_MS = 250;

/** This file cannot be mirrored now (the others go on); `cause: 'content'` when its bytes are wrong. */
class FileFailure extends Error {}

interface Connection {
  depot: DepotUrl;
  agent: Agent;
  authorization?: string;
  timeoutMs: number;
}

function describeNetworkError(err: unknown, conn: Connection): DepotkitError | undefined {
  const cause = (err as { cause?: NodeJS.ErrnoException }).cause ?? (err as NodeJS.ErrnoException);
  const code = cause?.code;
  if (isTlsTrustError(code)) {
    return new DepotkitError(
      `${conn.depot.base.origin} did not pass the TLS checks (${code}: ${cause.message}); nothing was sent to it.`,
      EXIT.problems,
      code === 'ERR_TLS_CERT_ALTNAME_INVALID'
        ? `Its certificate does not name ${conn.depot.host}: reach it by a name its certificate holds (depotkit cert show --host).`
        : 'Pass --ca with the CA certificate (or CA folder) that issued its certificate, as the installer trusts it.',
    );
  }
  return undefined;
}

async function get(conn: Connection, path: string, headers: Record<string, string> = {}) {
  try {
    return await request(depotFileUrl(conn.depot, path), {
      method: 'GET',
      dispatcher: conn.agent,
      headers: { ...(conn.authorization ? { authorization: conn.authorization } : {}), ...headers },
      headersTimeout: conn.timeoutMs,
      bodyTimeout: conn.timeoutMs,
    });
  } catch (err) {
    throw describeNetworkError(err, conn) ?? err;
  }
}

function authFailure(conn: Connection, status: number): DepotkitError {
  return new DepotkitError(
    `${conn.depot.base.origin} answered ${status}: ${conn.authorization ? 'the depot user or password was refused' : 'it needs credentials'}.`,
    EXIT.problems,
    conn.authorization ? 'Check --user and the password file.' : 'Pass --user and --password-file (or --password-env).',
  );
}

/** A metadata file, or undefined on 404. */
async function fetchMetadata(conn: Connection, path: string): Promise<Buffer | undefined> {
  const res = await get(conn, path);
  if (res.statusCode === 404) {
    await res.body.dump();
    return undefined;
  }
  if (res.statusCode === 401 || res.statusCode === 403) {
    await res.body.dump();
    throw authFailure(conn, res.statusCode);
  }
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw new DepotkitError(`${depotFileUrl(conn.depot, path)} answered ${res.statusCode}.`, EXIT.problems);
  }
  return readSmallBody(res, depotFileUrl(conn.depot, path));
}

async function readSmallBody(res: Awaited<ReturnType<typeof get>>, url: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length;
    if (size > METADATA_MAX_BYTES) {
      res.body.destroy();
      throw new DepotkitError(`${url} is larger than ${METADATA_MAX_BYTES} bytes: not depot metadata.`, EXIT.problems);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The body of a 200 answer; undefined for any other status (a server need not answer a folder or its root). */
async function fetchIfAnswered(conn: Connection, path: string, headers: Record<string, string> = {}): Promise<Buffer | undefined> {
  const res = await get(conn, path, headers);
  if (res.statusCode !== 200) {
    await res.body.dump();
    return undefined;
  }
  return readSmallBody(res, depotFileUrl(conn.depot, path));
}

/** How the vCenter upgrade metadata was found: the status of `depotkit serve`, a folder listing, or not at all. */
export type UpgradeMetadataSource = 'status' | 'listing' | 'none';

/**
 * The vCenter upgrade metadata a server holds, which its catalog does not
 * name: `depotkit serve` lists it in its status (JSON at `/`); another
 * server only when it lists the folder (an autoindex, in HTML or JSON).
 */
async function fetchUpgradeMetadata(conn: Connection): Promise<{ source: UpgradeMetadataSource; files: Map<string, Buffer> }> {
  const files = new Map<string, Buffer>();
  let source: UpgradeMetadataSource = 'none';
  let candidates: string[] = [];
  const status = await fetchIfAnswered(conn, '', { accept: 'application/json' });
  const listed = status && parseJsonOrUndefined(status.toString('utf8'));
  if (isObject(listed) && Array.isArray(listed.upgradeMetadata)) {
    source = 'status';
    candidates = listed.upgradeMetadata.filter((p): p is string => typeof p === 'string' && isUpgradeMetadataPath(p));
  } else {
    const listing = await fetchIfAnswered(conn, `${VCENTER_UPGRADE_METADATA_DIR}/`);
    if (listing) {
      source = 'listing';
      candidates = upgradeIdsInListing(listing.toString('utf8')).flatMap(upgradeMetadataPaths);
    }
  }
  // As many files as a metadata archive may hold at most: a listing of millions is not a depot's.
  if (candidates.length > METADATA_LIMITS.maxEntries)
    throw new DepotkitError(
      `${depotFileUrl(conn.depot, VCENTER_UPGRADE_METADATA_DIR)}/ names ${candidates.length} vCenter upgrade metadata files, more than the ${METADATA_LIMITS.maxEntries} a metadata archive may hold: not a depot's.`,
      EXIT.problems,
    );
  // A listed upgrade folder need not hold every file of the set: what the server has is copied.
  const fetched = await Promise.all(candidates.map((p) => fetchMetadata(conn, p)));
  candidates.forEach((p, i) => {
    if (fetched[i]) files.set(p, fetched[i]);
  });
  return { source, files };
}

/** Where an interrupted download of `binary` waits to be resumed (beside its final path, so the rename stays on one file system). */
export function partialPathFor(root: string, binary: { path: string; checksum: string; fileName: string }): string {
  return join(root, dirname(binary.path), `${TEMP_PREFIX}${MIRROR_PARTIAL_TAG}${binary.checksum.slice(0, 16)}-${binary.fileName}`);
}

/** Refuses to write a mirror over a depot that is not a mirror of the same URL, unless forced. */
async function claimTarget(root: string, base: string, force: boolean): Promise<void> {
  const stateFile = join(dirname(stateFileFor(root)), MIRROR_STATE_FILE);
  const previous = await readFile(stateFile, 'utf8').then(
    (t) => (JSON.parse(t) as { url?: string }).url,
    () => undefined,
  );
  if (previous === base) return;
  const held = await readdir(join(root, DEPOT_ROOT_DIR)).then(
    (e) => e.length > 0,
    () => false,
  );
  if (held && !force) {
    throw usageError(
      `${root} already holds a depot${previous ? ` mirrored from ${previous}` : ' that is not a mirror'}; a mirror of ${base} would replace its files.`,
      'Use --force to mirror into it anyway, or choose another --out.',
    );
  }
  await writeJsonAtomic(stateFile, { url: base }, { force: true });
}

/** Replicates a served depot over HTTPS: metadata, then every binary its catalog names, resumable and verified. */
export async function mirrorDepot(options: MirrorOptions): Promise<MirrorReport> {
  const { url: depot, findings } = parseDepotUrl(options.url);
  const prod = findings.find((f) => f.id === 'url.ends-with-prod');
  if (prod) throw usageError(`${options.url} ends in /${DEPOT_ROOT_DIR}; give the folder that contains it.`, prod.fix);
  const sendCredentials = options.user !== undefined;
  if (sendCredentials && !depot.https && !options.allowHttpCredentials) {
    throw usageError(
      `${options.url} is plain HTTP: the password of "${options.user}" would cross the network in clear text.`,
      'Use the https:// URL, or --allow-http-credentials if this network is yours.',
    );
  }
  const concurrency = options.concurrency ?? MIRROR_DEFAULTS.concurrency;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw usageError(`--concurrency must be at least 1, not ${concurrency}.`);
  const timeoutMs = options.timeoutMs ?? MIRROR_DEFAULTS.timeoutMs;
  const retries = options.retries ?? 3;
  const conn: Connection = {
    depot,
    timeoutMs,
    authorization: sendCredentials ? `Basic ${Buffer.from(`${options.user}:${options.password ?? ''}`).toString('base64')}` : undefined,
    // Every connection is verified before a request is written on it: the credentials reach only a server
    // that passes the CA check and the host name check, as the installer's strict client does.
    agent: new Agent({
      connect: depot.https
        ? {
            ca: options.caPems?.length ? options.caPems : undefined,
            rejectUnauthorized: true,
            allowPartialTrustChain: true,
            minVersion: 'TLSv1.2',
            servername: depot.isIp ? undefined : depot.host,
            timeout: timeoutMs,
          }
        : { timeout: timeoutMs },
      connections: concurrency + 1,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    }),
  };

  try {
    // The catalog first: it proves the server is a depot (and that the trust and credentials work)
    // before anything is written locally.
    const catalogBytes = await fetchMetadata(conn, DEPOT_PATHS.catalog);
    if (!catalogBytes)
      throw new DepotkitError(
        `${depotFileUrl(depot, DEPOT_PATHS.catalog)} answered 404: no depot is served there.`,
        EXIT.problems,
        'Give the URL of the folder that contains PROD/ (the one an installer is given).',
      );
    let binaries: CatalogBinary[];
    try {
      binaries = catalogBinaries(parseCatalog(catalogBytes.toString('utf8'), depotFileUrl(depot, DEPOT_PATHS.catalog)));
    } catch (err) {
      if (err instanceof CatalogError) throw new DepotkitError(err.message, EXIT.problems);
      throw err;
    }
    const target = await TargetDepot.open(options.out);
    await claimTarget(target.root, depot.base.href, options.force ?? false);
    const metadata = new Map<string, Buffer>([[DEPOT_PATHS.catalog, catalogBytes]]);
    const missingMetadata: string[] = [];
    const others = [...MIRROR_METADATA_PATHS.required.filter((p) => p !== DEPOT_PATHS.catalog), ...MIRROR_METADATA_PATHS.optional];
    const fetched = await Promise.all(others.map((p) => fetchMetadata(conn, p)));
    others.forEach((p, i) => {
      const data = fetched[i];
      if (data) metadata.set(p, data);
      else if ((MIRROR_METADATA_PATHS.required as readonly string[]).includes(p)) missingMetadata.push(p);
    });
    const upgrade = await fetchUpgradeMetadata(conn);
    for (const [path, data] of upgrade.files) metadata.set(path, data);
    const current = await readCatalogOf(target.root).catch(() => undefined);

    const report: Omit<MirrorReport, 'verify' | 'releases' | 'ok'> = {
      url: depot.base.href,
      out: target.root,
      metadata: { written: [], unchanged: [], missing: missingMetadata, held: false },
      upgradeMetadata: { source: upgrade.source, files: upgrade.files.size },
      downloaded: [],
      alreadyInPlace: [],
      failed: [],
      bytesDownloaded: 0,
      bytesHashedLocally: 0,
      stale: 0,
    };

    // What is here already: remembered as verified, or of the right size and then hashed once.
    const work: CatalogBinary[] = [];
    const toHash: CatalogBinary[] = [];
    for (const b of binaries) {
      if (await target.inPlace(b.path, b.checksum)) report.alreadyInPlace.push({ path: b.path, size: b.size });
      else if (
        (await stat(target.path(b.path)).then(
          (s) => s.isFile() && s.size,
          () => undefined,
        )) === b.size
      )
        toHash.push(b);
      else work.push(b);
    }
    if (toHash.length) {
      report.bytesHashedLocally += toHash.reduce((s, b) => s + b.size, 0);
      const same = await target.adopt(toHash.map((b) => ({ path: b.path, sha256: b.checksum })));
      for (const b of toHash) {
        if (same.has(b.path)) report.alreadyInPlace.push({ path: b.path, size: b.size });
        else work.push(b);
      }
    }
    const partialSizes = await Promise.all(
      work.map((b) =>
        stat(partialPathFor(target.root, b)).then(
          (s) => Math.min(s.size, b.size),
          () => 0,
        ),
      ),
    );
    options.onStart?.(work.reduce((s, b, i) => s + b.size - partialSizes[i]!, 0));

    // Largest first, so that the last minutes are not one big file on one connection.
    work.sort((a, b) => b.size - a.size || a.path.localeCompare(b.path));
    const limit = pLimit(concurrency);
    let fatal: unknown;
    await Promise.all(
      work.map((b) =>
        limit(async () => {
          if (fatal) return;
          try {
            const resumedFrom = await downloadBinary(conn, target, b, retries, report, options.onBytes);
            report.downloaded.push({ path: b.path, size: b.size, resumedFrom });
          } catch (err) {
            if (err instanceof FileFailure) report.failed.push({ path: b.path, size: b.size, reason: err.message });
            else fatal ??= err;
          }
        }),
      ),
    );
    if (fatal) throw fatal;
    report.downloaded.sort((a, b) => a.path.localeCompare(b.path));
    report.failed.sort((a, b) => a.path.localeCompare(b.path));

    // Metadata last, and over the depot's own only when every binary it names came through.
    const changed: [string, Buffer][] = [];
    for (const [path, data] of metadata) {
      const here = await readFile(target.path(path)).catch(() => undefined);
      if (here?.equals(data)) report.metadata.unchanged.push(path);
      else changed.push([path, data]);
    }
    if (changed.length && report.failed.length && current !== undefined && !current.bytes.equals(catalogBytes)) {
      report.metadata.held = true;
    } else {
      changed.sort(([a], [b]) => Number(a === DEPOT_PATHS.catalog) - Number(b === DEPOT_PATHS.catalog));
      for (const [path, data] of changed) {
        await writeFileAtomic(target.path(path), data, { force: true });
        await target.remember(path, sha256Hex(data));
        report.metadata.written.push(path);
      }
    }
    await target.save();
    const named = new Set(binaries.map((b) => b.path));
    report.stale = (await staleBinaries(target.root, named)).length;
    const verify = await verifyDepot(target.root, { signingCertPem: options.signingCertPem });
    const now = await readCatalogOf(target.root).catch(() => undefined);
    const releases = now ? await releaseStatus(target.root, now.catalog) : [];
    return { ...report, ok: report.failed.length === 0 && !report.metadata.held && verify.ok, releases, verify };
  } finally {
    await conn.agent.close().catch(() => undefined);
  }
}

async function staleBinaries(root: string, named: Set<string>): Promise<string[]> {
  const stale: string[] = [];
  const comp = join(root, DEPOT_PATHS.comp);
  for (const component of await readdir(comp).catch(() => [] as string[])) {
    for (const name of await readdir(join(comp, component)).catch(() => [] as string[])) {
      const path = `${DEPOT_PATHS.comp}/${component}/${name}`;
      if (name.startsWith(TEMP_PREFIX) || named.has(path)) continue;
      if (
        await stat(join(root, path)).then(
          (s) => s.isFile(),
          () => false,
        )
      )
        stale.push(path);
    }
  }
  return stale;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Parses `Content-Range: bytes start-end/total`. */
function contentRange(header: string | string[] | undefined): { start: number; total?: number } | undefined {
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(String(header ?? '').trim());
  return m ? { start: Number(m[1]), total: m[3] === '*' ? undefined : Number(m[3]) } : undefined;
}

/** A partial file and the hash of exactly the bytes it holds. */
interface Partial {
  handle: FileHandle;
  hash: Hash;
  have: number;
}

async function restart(p: Partial): Promise<void> {
  await p.handle.truncate(0);
  p.hash = createHash('sha256');
  p.have = 0;
}

/**
 * Downloads one binary into its partial file, resuming what an earlier
 * attempt (or an earlier, killed run) left with a Range request; checks size
 * and SHA-256, then renames it into place. Returns the bytes resumed from.
 */
async function downloadBinary(
  conn: Connection,
  target: TargetDepot,
  binary: CatalogBinary,
  retries: number,
  report: { bytesDownloaded: number; bytesHashedLocally: number },
  onBytes?: (n: number) => void,
): Promise<number> {
  const partialPath = partialPathFor(target.root, binary);
  await mkdir(dirname(partialPath), { recursive: true });
  let p: Partial | undefined;
  let resumedFrom = 0;
  let fromScratch = false;
  try {
    const handle = await open(partialPath, fsConstants.O_RDWR | fsConstants.O_CREAT, 0o644);
    p = { handle, hash: createHash('sha256'), have: (await handle.stat()).size };
    if (p.have > binary.size) await restart(p);
    // What an earlier run left is hashed again: a hash's state cannot be saved, the bytes can.
    if (p.have > 0) {
      for await (const chunk of readChunks(handle, 0, p.have)) p.hash.update(chunk);
      report.bytesHashedLocally += p.have;
      resumedFrom = p.have;
    }
    for (let attempt = 0; ; attempt++) {
      if (p.have < binary.size) {
        const error = await fetchInto(conn, binary, p, report, onBytes);
        if (p.have < binary.size) {
          if (attempt >= retries)
            throw new FileFailure(
              `the download stopped at ${p.have} of ${binary.size} bytes after ${attempt + 1} attempts${error ? `: ${errorMessage(error)}` : ''}`,
            );
          await sleep(RETRY_BASE_MS * 2 ** attempt);
          continue;
        }
      }
      const sha256 = p.hash.digest('hex');
      if (sha256 === binary.checksum) break;
      // A partial file from an earlier run may hold bytes of another version of the file: once, from scratch.
      if (resumedFrom > 0 && !fromScratch) {
        fromScratch = true;
        await restart(p);
        continue;
      }
      throw new FileFailure(`its SHA-256 is ${sha256}, the catalog says ${binary.checksum}: the server's file is not the catalog's`, { cause: 'content' });
    }
    await p.handle.datasync();
    await p.handle.close();
    p = undefined;
    await chmod(partialPath, 0o644);
    await rename(partialPath, target.path(binary.path));
    await target.remember(binary.path, binary.checksum);
    return resumedFrom;
  } catch (err) {
    await p?.handle.close().catch(() => undefined);
    // A wrong file is of no use; a partial one is kept for the next run.
    if (err instanceof FileFailure && err.cause === 'content') await rm(partialPath, { force: true });
    throw err;
  }
}

/**
 * One GET (ranged when bytes are already held), streamed into the partial
 * file. Returns the network error that cut it short, if any (the bytes that
 * arrived are kept); throws what no retry can fix.
 */
async function fetchInto(
  conn: Connection,
  binary: CatalogBinary,
  p: Partial,
  report: { bytesDownloaded: number },
  onBytes: ((n: number) => void) | undefined,
): Promise<unknown> {
  let res: Awaited<ReturnType<typeof get>>;
  try {
    res = await get(conn, binary.path, p.have > 0 ? { range: `bytes=${p.have}-` } : {});
  } catch (err) {
    if (err instanceof DepotkitError) throw err;
    return err;
  }
  const status = res.statusCode;
  const refuse = async (failure: Error) => {
    await res.body.dump().catch(() => undefined);
    throw failure;
  };
  if (status === 401 || status === 403) return refuse(authFailure(conn, status));
  if (status === 404) return refuse(new FileFailure('the server does not have it (HTTP 404)'));
  if (status >= 500) {
    await res.body.dump().catch(() => undefined);
    return new Error(`HTTP ${status}`);
  }
  if (status === 416) {
    // The server holds fewer bytes than already here: start again.
    await res.body.dump().catch(() => undefined);
    await restart(p);
    return new Error('HTTP 416');
  }
  if (status === 200) {
    // No range support (or the range ignored): the whole file comes again.
    if (p.have > 0) await restart(p);
    const length = Number(res.headers['content-length']);
    if (Number.isFinite(length) && length !== binary.size)
      return refuse(new FileFailure(`the server has another size (${length} bytes) than the catalog (${binary.size})`, { cause: 'content' }));
  } else if (status === 206) {
    const range = contentRange(res.headers['content-range']);
    if (range?.total !== undefined && range.total !== binary.size)
      return refuse(new FileFailure(`the server has another size (${range.total} bytes) than the catalog (${binary.size})`, { cause: 'content' }));
    if (!range || range.start !== p.have) {
      await res.body.dump().catch(() => undefined);
      return new Error(`the server answered the range ${p.have}- with ${String(res.headers['content-range'])}`);
    }
  } else {
    return refuse(new FileFailure(`the server answered ${status}`));
  }
  const writer = new PositionalWriter(p.handle, p.have);
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async () => {
    if (pendingBytes === 0) return;
    const data = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
    p.have += pendingBytes;
    pending = [];
    pendingBytes = 0;
    // Hashed as written, so that the file and its hash always agree.
    p.hash.update(data);
    try {
      await writer.write(data);
    } catch (err) {
      // The local disk failed (full, quota): no retry helps.
      throw Object.assign(err as Error, { local: true });
    }
  };
  let failure: unknown;
  try {
    for await (const chunk of res.body) {
      const data = chunk as Buffer;
      if (p.have + pendingBytes + data.length > binary.size) {
        res.body.destroy();
        throw new FileFailure(`the server sent more than the catalog's ${binary.size} bytes`, { cause: 'content' });
      }
      pending.push(data);
      pendingBytes += data.length;
      report.bytesDownloaded += data.length;
      onBytes?.(data.length);
      if (pendingBytes >= CHUNK_BYTES / 4) await flush();
    }
  } catch (err) {
    if (err instanceof FileFailure || (err as { local?: boolean }).local) throw err;
    failure = err;
  } finally {
    // Whatever arrived is written, so that the file and its hash agree for the next attempt.
    await flush();
    await writer.flush();
  }
  return failure;
}
