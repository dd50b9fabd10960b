import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import { limiter } from '../../util/limit.js';
import { BUNDLE_DOWNLOAD_STATUS, TEMP_PREFIX, type BundleDownloadStatus } from '../../constants.js';
import type { SimBundle } from './bundles.js';
import { accountHeaders, targetUrl } from './depot-probe.js';
import { depotAgent, type DepotConnectOptions, type DepotTarget } from './depot-tls.js';
import { checkFetched, fetchBinary, type FetchedBinary } from './fetch-binary.js';
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
  private readonly limit = limiter(PARALLEL_BUNDLES);

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
    try {
      const fetched: FetchedBinary[] = [];
      for (const binary of bundle.binaries) {
        fetched.push(
          await fetchBinary(binary, {
            url: targetUrl(connection.target, binary.path),
            headers,
            agent,
            signal,
            log: this.log,
            component: COMPONENT,
            onBytes: (n) => (state.downloadedSize += n),
            openSink: async () => (this.store ? this.openSink(binary.path, temps) : undefined),
          }),
        );
      }
      state.status = BUNDLE_DOWNLOAD_STATUS.validating;
      checkFetched(fetched);
      for (const t of temps) await rename(t.temp, t.final);
      state.status = BUNDLE_DOWNLOAD_STATUS.success;
      state.message = `Bundle ${bundle.name} downloaded and validated.`;
      const what = `${fetched.length} files, ${state.downloadedSize} bytes`;
      this.log.write('INFO', COMPONENT, `Bundle ${bundle.name} (${bundle.id}) downloaded and validated: ${what}`);
    } catch (err) {
      state.status = BUNDLE_DOWNLOAD_STATUS.failed;
      state.message = signal.aborted ? 'The download was stopped.' : `Failed to download bundle ${bundle.name}: ${(err as Error).message}`;
      this.log.write('ERROR', COMPONENT, state.message);
      await Promise.all(temps.map((t) => rm(t.temp, { force: true })));
    } finally {
      state.endTime = this.clock();
      agent.destroy();
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
