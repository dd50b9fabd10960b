import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import pLimit from 'p-limit';
import { request } from 'undici';
import { BUNDLE_DOWNLOAD_STATUS, TEMP_PREFIX, type BundleDownloadStatus } from '../../constants.js';
import type { SimBundle } from './bundles.js';
import { accountHeaders, depotAgent, targetUrl, type DepotConnectOptions, type DepotTarget } from './depot-probe.js';
import type { ServiceLog } from './log.js';

/** Where and how the installer reaches the depot, at the moment a download starts. */
export interface DepotConnection {
  target: DepotTarget;
  account: { username?: string; password?: string };
  trustedPems: string[];
  options: DepotConnectOptions;
}

export interface DownloadState {
  status: BundleDownloadStatus;
  downloadId?: string;
  downloadedSize: number;
  scheduledTime?: number;
  startTime?: number;
  endTime?: number;
  message?: string;
}

const COMPONENT = 'BundleDownloadService';
/** Bundles downloaded at once; the rest wait SCHEDULED. */
const PARALLEL_BUNDLES = 4;

class DownloadFailure extends Error {}

/**
 * Downloads bundles from the depot as the installer does: every binary by GET
 * with the offline account's credentials over the installer's TLS rules, its
 * size and SHA-256 checked against the catalog. Kept only as a verdict, or,
 * with a store folder, as files laid out like the depot (written through a
 * temporary name, renamed once the bundle validated).
 */
export class BundleDownloads {
  private readonly states = new Map<string, DownloadState>();
  private readonly running = new Map<string, AbortController>();
  private readonly limit = pLimit(PARALLEL_BUNDLES);

  constructor(
    private readonly log: ServiceLog,
    private readonly clock: () => number,
    private readonly store?: string,
  ) {}

  state(id: string): DownloadState {
    return this.states.get(id) ?? { status: BUNDLE_DOWNLOAD_STATUS.pending, downloadedSize: 0 };
  }

  /** Schedules the bundle's download; the caller has checked it is neither done nor under way. */
  start(bundle: SimBundle, connection: DepotConnection): DownloadState {
    const state: DownloadState = { status: BUNDLE_DOWNLOAD_STATUS.scheduled, downloadId: randomUUID(), downloadedSize: 0, scheduledTime: this.clock() };
    this.states.set(bundle.id, state);
    const abort = new AbortController();
    this.running.set(bundle.id, abort);
    this.log.write('INFO', COMPONENT, `Scheduled the download of bundle ${bundle.name} (${bundle.id})`);
    void this.limit(() => this.download(bundle, state, connection, abort.signal)).finally(() => this.running.delete(bundle.id));
    return state;
  }

  /** Forgets a bundle's download (and its stored files); false while it is under way. */
  async delete(bundle: SimBundle): Promise<boolean> {
    if (this.running.has(bundle.id)) return false;
    this.states.delete(bundle.id);
    if (this.store) await Promise.all(bundle.binaries.map((b) => rm(join(this.store!, b.path), { force: true })));
    return true;
  }

  /** Stops every download under way (the simulator is closing). */
  async close(): Promise<void> {
    for (const abort of this.running.values()) abort.abort();
    while (this.running.size > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  private async download(bundle: SimBundle, state: DownloadState, connection: DepotConnection, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    state.status = BUNDLE_DOWNLOAD_STATUS.inProgress;
    state.startTime = this.clock();
    const agent = depotAgent(connection.target, connection.trustedPems, connection.options);
    const headers = accountHeaders(connection.account);
    const temps: Array<{ temp: string; final: string }> = [];
    const fetched: Array<{ path: string; bytes: number; sha256: string; size: number; checksum: string }> = [];
    try {
      for (const binary of bundle.binaries) {
        const url = targetUrl(connection.target, binary.path);
        let res;
        try {
          res = await request(url, { method: 'GET', headers, dispatcher: agent, signal });
        } catch (err) {
          throw new DownloadFailure(`${binary.path}: the depot could not be reached (${(err as Error).message}).`);
        }
        this.log.write('INFO', COMPONENT, `GET ${url} -> ${res.statusCode}`);
        if (res.statusCode !== 200) {
          await res.body.dump();
          const why =
            res.statusCode === 401 || res.statusCode === 403 ? ' (the depot refused the credentials)' : res.statusCode === 404 ? ' (not in the depot)' : '';
          throw new DownloadFailure(`${binary.path}: HTTP ${res.statusCode} from the depot${why}.`);
        }
        const hash = createHash('sha256');
        let bytes = 0;
        let storeError: Error | undefined;
        const sink = this.store ? await this.openSink(binary.path, temps) : undefined;
        let overrun = false;
        const counter = new Writable({
          write: (whole: Buffer, _encoding, done) => {
            // One byte past the catalog's size is enough to fail the check: the rest is not read (nor stored).
            const chunk = whole.subarray(0, binary.size + 1 - bytes);
            hash.update(chunk);
            bytes += chunk.length;
            state.downloadedSize += chunk.length;
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
          if (signal.aborted) throw err;
          if (overrun) throw new DownloadFailure(`${binary.path}: the depot sent more than the catalog's ${binary.size} bytes; the download was stopped.`);
          if (storeError) throw new DownloadFailure(`${binary.path}: cannot be stored (${storeError.message}).`);
          // A connection cut mid-body is a short read, judged below with the bytes that came.
          this.log.write('WARN', COMPONENT, `${binary.path}: the download broke off after ${bytes} bytes (${(err as Error).message})`);
        }
        fetched.push({ path: binary.path, bytes, sha256: hash.digest('hex'), size: binary.size, checksum: binary.checksum });
      }
      state.status = BUNDLE_DOWNLOAD_STATUS.validating;
      for (const f of fetched) {
        if (f.bytes !== f.size)
          throw new DownloadFailure(`${f.path}: short read, ${f.bytes} of ${f.size} bytes${f.bytes > f.size ? ' (longer than the catalog says)' : ''}.`);
        if (f.sha256 !== f.checksum) throw new DownloadFailure(`${f.path}: checksum mismatch, SHA-256 ${f.sha256} where the catalog has ${f.checksum}.`);
      }
      for (const t of temps) await rename(t.temp, t.final);
      state.status = BUNDLE_DOWNLOAD_STATUS.success;
      state.message = `Bundle ${bundle.name} downloaded and validated.`;
      this.log.write(
        'INFO',
        COMPONENT,
        `Bundle ${bundle.name} (${bundle.id}) downloaded and validated: ${fetched.length} files, ${state.downloadedSize} bytes`,
      );
    } catch (err) {
      state.status = BUNDLE_DOWNLOAD_STATUS.failed;
      state.message = signal.aborted
        ? 'The download was stopped.'
        : err instanceof DownloadFailure
          ? `Failed to download bundle ${bundle.name}: ${err.message}`
          : `Failed to download bundle ${bundle.name}: ${(err as Error).message}`;
      this.log.write('ERROR', COMPONENT, state.message);
      await Promise.all(temps.map((t) => rm(t.temp, { force: true })));
    } finally {
      state.endTime = this.clock();
      await agent.close();
    }
  }

  private async openSink(path: string, temps: Array<{ temp: string; final: string }>): Promise<Writable> {
    const final = join(this.store!, path);
    const temp = join(dirname(final), `${TEMP_PREFIX}${randomUUID()}`);
    await mkdir(dirname(final), { recursive: true });
    temps.push({ temp, final });
    return createWriteStream(temp, { flags: 'wx' });
  }
}
