import { createHash, type Hash } from 'node:crypto';
import { type FileHandle, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { CatalogBinary } from '../../depot/catalog.js';
import { DepotkitError, errorMessage } from '../../util/errors.js';
import { CHUNK_BYTES, readChunks, writevAt } from '../io.js';
import { type Connection, authFailure, discard, get, watchProgress } from './connection.js';
import { FileFailure, localFailure } from './failure.js';
import { DepotFiles, type Written, partialPathFor } from './local.js';
import type { ProgressWatch } from './progress.js';

const RETRY_BASE_MS = 250;

/** What a download needs of a file: where it goes, and the size and SHA-256 it must have (a catalog's binary, or an ESX depot's VIB). */
export type MirroredFile = Pick<CatalogBinary, 'path' | 'size' | 'checksum' | 'fileName'>;

export interface DownloadContext {
  conn: Connection;
  files: DepotFiles;
  /** A verified file was renamed to `final`: to be remembered and made durable (its data too when `flushed` is false). */
  placed(final: string, sha256: string, written: Written, flushed: boolean): Promise<void>;
  retries: number;
  tally: { bytesDownloaded: number; bytesHashedLocally: number };
  onBytes?: (n: number) => void;
  /** Something else was found at a partial download's name (a link, another user's file): removed, never followed. */
  onReplaced?: (path: string, what: string) => void;
}

/** A partial file and the hash of exactly the bytes it holds. */
interface Partial {
  handle: FileHandle;
  path: string;
  hash: Hash;
  have: number;
}

async function restart(p: Partial): Promise<void> {
  await p.handle.truncate(0);
  p.hash = createHash('sha256');
  p.have = 0;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Parses `Content-Range: bytes start-end/total`. */
function contentRange(header: string | string[] | undefined): { start: number; total?: number } | undefined {
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(String(header ?? '').trim());
  return m ? { start: Number(m[1]), total: m[3] === '*' ? undefined : Number(m[3]) } : undefined;
}

/** The partial file of `binary`, opened safely, with what it already holds hashed again (a hash's state cannot be saved, the bytes can). */
async function openPartial(ctx: DownloadContext, binary: MirroredFile): Promise<Partial> {
  const path = partialPathFor(ctx.files.root, binary);
  const opened = await ctx.files.openPartial(path);
  if (opened.replaced) ctx.onReplaced?.(binary.path, opened.replaced);
  const p: Partial = { handle: opened.handle, path, hash: createHash('sha256'), have: opened.have };
  try {
    if (p.have > binary.size) await restart(p);
    for await (const chunk of readChunks(p.handle, 0, p.have)) p.hash.update(chunk);
    ctx.tally.bytesHashedLocally += p.have;
  } catch (err) {
    await p.handle.close();
    throw localFailure(err, path);
  }
  return p;
}

/**
 * Downloads one binary into its partial file, resuming what an earlier
 * attempt (or an earlier, killed run) left with a Range request; checks size
 * and SHA-256, then renames it into place. Attempts end when the retries are
 * spent, or at once when the transfer broke the progress rule. Returns the
 * bytes resumed from.
 */
export async function downloadBinary(ctx: DownloadContext, binary: MirroredFile): Promise<number> {
  await ctx.files.folder(dirname(binary.path));
  const p = await openPartial(ctx, binary);
  const resumedFrom = p.have;
  const watch = watchProgress(ctx.conn);
  let open = true;
  try {
    let fromScratch = false;
    for (let attempt = 0; ; attempt++) {
      if (p.have < binary.size) {
        const error = await fetchInto(ctx, binary, p, watch);
        if (p.have < binary.size) {
          const why = watch.stalled ?? error;
          if (watch.stalled || attempt >= ctx.retries)
            throw new FileFailure(
              `the download stopped at ${p.have} of ${binary.size} bytes after ${plural(attempt + 1)}${why ? `: ${errorMessage(why)}` : ''}`,
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
    watch.stop();
    open = false;
    const final = join(ctx.files.root, binary.path);
    // A file replacing another is flushed before the rename, so that a power cut leaves the old one or the new.
    const replacing = ctx.files.taken(final);
    const written = await DepotFiles.finish(p.handle, replacing);
    await ctx.files.place(p.path, final, written);
    await ctx.placed(final, binary.checksum, written, replacing);
    return resumedFrom;
  } catch (err) {
    if (open) await p.handle.close().catch(() => undefined);
    // A wrong file is of no use; a partial one is kept for the next run.
    if (err instanceof FileFailure && err.cause === 'content') await unlink(p.path).catch(() => undefined);
    throw err;
  } finally {
    watch.stop();
  }
}

const plural = (n: number) => `${n} attempt${n === 1 ? '' : 's'}`;

/**
 * One GET (ranged when bytes are already held), streamed into the partial
 * file. Returns the network error that cut it short, if any (the bytes that
 * arrived are kept); throws what no retry can fix.
 */
async function fetchInto(ctx: DownloadContext, binary: MirroredFile, p: Partial, watch: ProgressWatch): Promise<unknown> {
  let res: Awaited<ReturnType<typeof get>>;
  try {
    res = await get(ctx.conn, binary.path, p.have > 0 ? { range: `bytes=${p.have}-` } : {}, watch);
  } catch (err) {
    if (err instanceof DepotkitError) throw err;
    return err;
  }
  const status = res.statusCode;
  const refuse = async (failure: Error) => {
    await discard(res);
    throw failure;
  };
  if (status === 401 || status === 403) return refuse(authFailure(ctx.conn, status));
  if (status === 404) return refuse(new FileFailure('the server does not have it (HTTP 404)'));
  if (status >= 500) {
    await discard(res);
    return new Error(`HTTP ${status}`);
  }
  if (status === 416) {
    // The server holds fewer bytes than already here: start again.
    await discard(res);
    await restart(p);
    return new Error('HTTP 416');
  }
  if (status === 200) {
    // No range support (or the range ignored): the whole file comes again.
    if (p.have > 0) await restart(p);
    const length = Number(res.headers['content-length']);
    if (res.headers['content-length'] !== undefined && Number.isFinite(length) && length !== binary.size)
      return refuse(new FileFailure(`the server has another size (${length} bytes) than the catalog (${binary.size})`, { cause: 'content' }));
  } else if (status === 206) {
    const range = contentRange(res.headers['content-range']);
    if (range?.total !== undefined && range.total !== binary.size)
      return refuse(new FileFailure(`the server has another size (${range.total} bytes) than the catalog (${binary.size})`, { cause: 'content' }));
    if (!range || range.start !== p.have) {
      await discard(res);
      return new Error(`the server answered the range ${p.have}- with ${String(res.headers['content-range'])}`);
    }
  } else {
    return refuse(new FileFailure(`the server answered ${status}`));
  }
  return receive(ctx, binary, p, res, watch);
}

/** Bytes gathered before they are written: one system call for many TLS records. */
const WRITE_BATCH_BYTES = CHUNK_BYTES / 4;
/** Bytes held waiting for the disk before the body is paused. */
const HELD_BYTES_MAX = CHUNK_BYTES;

/** A body's records written to the partial file in batches, one write at a time; `p.have` counts what landed. */
class BatchWriter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  writing = false;

  constructor(
    private readonly p: Partial,
    /** A write landed (and none is under way). */
    private readonly landed: () => void,
    /** A write failed: the local disk (full, quota), which no retry helps. */
    private readonly failed: (err: Error) => void,
  ) {}

  get held(): number {
    return this.pendingBytes;
  }

  add(chunk: Buffer): void {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
  }

  drop(): void {
    this.pending = [];
    this.pendingBytes = 0;
  }

  /** Starts a write of what is held; false when there is nothing to write. */
  write(): boolean {
    if (this.writing) return true;
    if (this.pendingBytes === 0) return false;
    const buffers = this.pending;
    const n = this.pendingBytes;
    this.drop();
    this.writing = true;
    writevAt(this.p.handle, buffers, this.p.have).then(
      () => {
        this.writing = false;
        this.p.have += n;
        this.landed();
      },
      (err: unknown) => this.failed(localFailure(err, this.p.path)),
    );
    return true;
  }
}

/**
 * Streams an answer's body into the partial file, never past the catalog's
 * size. Event-driven rather than an async iteration: a VIB depot is
 * thousands of bodies of a few hundred TLS records each, and the per-record
 * cost of iterating was most of the mirror's CPU. Each record is hashed as it
 * arrives (in order) and written in batches, one write at a time; the body is
 * paused while the disk lags. `p.have` counts written bytes only, and the hash
 * covers exactly those whenever this returns: what arrived is written first.
 */
async function receive(ctx: DownloadContext, binary: MirroredFile, p: Partial, res: Awaited<ReturnType<typeof get>>, watch: ProgressWatch): Promise<unknown> {
  const max = binary.size - p.have;
  const tooLarge = () => new FileFailure(`the server sent more than the catalog's ${binary.size} bytes`, { cause: 'content' });
  const declared = Number(res.headers['content-length']);
  if (res.headers['content-length'] !== undefined && Number.isFinite(declared) && declared > max) {
    res.body.destroy();
    throw tooLarge();
  }
  const body = res.body;
  const release = watch.guard(body);
  try {
    return await new Promise<unknown>((resolve, reject) => {
      let received = 0;
      let ended = false;
      let failure: unknown;
      let fatal: Error | undefined;
      let settled = false;
      const settle = (err?: Error) => {
        if (settled) return;
        settled = true;
        if (err) reject(err);
        else resolve(failure);
      };
      const writer = new BatchWriter(
        p,
        () => {
          if (fatal) return settle(fatal);
          if (!ended && body.isPaused()) body.resume();
          if ((ended || writer.held >= WRITE_BATCH_BYTES) && !writer.write() && ended) settle();
        },
        (err) => {
          body.destroy();
          settle(err);
        },
      );
      const end = (err?: unknown) => {
        if (ended) return;
        ended = true;
        // The watch ended the body: its reason, not the stream's.
        if (err !== undefined) failure = watch.stalled ?? err;
        if (!writer.write()) settle();
      };
      body.on('data', (chunk: Buffer) => {
        if (ended) return;
        received += chunk.length;
        if (received > max) {
          // Nothing more is written; a write under way ends first, before the caller removes the file.
          ended = true;
          fatal = tooLarge();
          writer.drop();
          body.destroy();
          if (!writer.writing) settle(fatal);
          return;
        }
        watch.add(chunk.length);
        ctx.tally.bytesDownloaded += chunk.length;
        ctx.onBytes?.(chunk.length);
        p.hash.update(chunk);
        writer.add(chunk);
        if (writer.held >= WRITE_BATCH_BYTES) writer.write();
        if (writer.held >= HELD_BYTES_MAX) body.pause();
      });
      body.once('end', () => end());
      body.once('error', (err) => end(err));
      // Destroyed from outside with neither an end nor an error: the answer is cut short.
      body.once('close', () => end(new Error('the answer ended early')));
    });
  } finally {
    release();
  }
}
