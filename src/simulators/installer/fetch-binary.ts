import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type StreamAnswer, discard } from '../../net/index.js';
import { NETWORK_LIMITS } from '../../util/limits.js';
import { type DepotAgent, depotRequest } from './depot-tls.js';
import type { ServiceLog } from './log.js';

/** A download's failure in the simulated installer's words (the depot's answer, a short read, a mismatch). */
class DownloadFailure extends Error {}

/** One binary of a bundle as the catalog lists it. */
interface ListedBinary {
  path: string;
  size: number;
  checksum: string;
}

/** What came of one binary's GET: judged against the catalog once the bundle's binaries are all in. */
export interface FetchedBinary extends ListedBinary {
  bytes: number;
  sha256: string;
}

/** Where a binary's GET goes and what it reports to. */
interface BinaryFetch {
  url: string;
  headers: Record<string, string>;
  agent: DepotAgent;
  signal: AbortSignal;
  log: ServiceLog;
  component: string;
  /** Counts the bytes as they come, for the download's status. */
  onBytes(n: number): void;
  /** Where the bytes are kept (the store), opened once the depot answered 200. */
  openSink(): Promise<Writable | undefined>;
}

/** Fails the binary unless the depot answered 200. */
async function answered(binary: ListedBinary, f: BinaryFetch): Promise<StreamAnswer> {
  let res: StreamAnswer;
  try {
    res = await depotRequest(f.url, { method: 'GET', headers: f.headers, agent: f.agent, signal: f.signal });
  } catch (err) {
    throw new DownloadFailure(`${binary.path}: the depot could not be reached (${(err as Error).message}).`);
  }
  f.log.write('INFO', f.component, `GET ${f.url} -> ${res.statusCode}`);
  if (res.statusCode !== 200) {
    await discard(res, NETWORK_LIMITS.discardBytes);
    const why = res.statusCode === 401 || res.statusCode === 403 ? ' (the depot refused the credentials)' : res.statusCode === 404 ? ' (not in the depot)' : '';
    throw new DownloadFailure(`${binary.path}: HTTP ${res.statusCode} from the depot${why}.`);
  }
  return res;
}

/**
 * GETs one binary, hashing and counting it (and storing it, with a sink). A connection cut
 * mid-body is a short read, left to the judgement of the whole bundle; one byte past the
 * catalog's size stops the download at once.
 */
export async function fetchBinary(binary: ListedBinary, f: BinaryFetch): Promise<FetchedBinary> {
  const res = await answered(binary, f);
  const hash = createHash('sha256');
  let bytes = 0;
  let storeError: Error | undefined;
  let overrun = false;
  const sink = await f.openSink();
  const counter = new Writable({
    write: (whole: Buffer, _encoding, done) => {
      // One byte past the catalog's size is enough to fail the check: the rest is not read (nor stored).
      const chunk = whole.subarray(0, binary.size + 1 - bytes);
      hash.update(chunk);
      bytes += chunk.length;
      f.onBytes(chunk.length);
      if (bytes > binary.size) {
        overrun = true;
        return done(new Error(`more than the catalog's ${binary.size} bytes`));
      }
      if (!sink) return done();
      sink.write(chunk, (err) => {
        storeError ??= err ?? undefined;
        done(err ?? null);
      });
    },
    final: (done) => {
      if (!sink) return done();
      sink.once('error', done);
      sink.end(() => done());
    },
  });
  sink?.on('error', () => undefined); // reported through the write callbacks
  try {
    await pipeline(res.body, counter);
  } catch (err) {
    if (f.signal.aborted) throw err;
    if (overrun) throw new DownloadFailure(`${binary.path}: the depot sent more than the catalog's ${binary.size} bytes; the download was stopped.`);
    if (storeError) throw new DownloadFailure(`${binary.path}: cannot be stored (${storeError.message}).`);
    f.log.write('WARN', f.component, `${binary.path}: the download broke off after ${bytes} bytes (${(err as Error).message})`);
  }
  return { path: binary.path, size: binary.size, checksum: binary.checksum, bytes, sha256: hash.digest('hex') };
}

/** The bundle's verdict: every binary whole and with the catalog's checksum. */
export function checkFetched(fetched: FetchedBinary[]): void {
  for (const f of fetched) {
    if (f.bytes !== f.size)
      throw new DownloadFailure(`${f.path}: short read, ${f.bytes} of ${f.size} bytes${f.bytes > f.size ? ' (longer than the catalog says)' : ''}.`);
    if (f.sha256 !== f.checksum) throw new DownloadFailure(`${f.path}: checksum mismatch, SHA-256 ${f.sha256} where the catalog has ${f.checksum}.`);
  }
}
