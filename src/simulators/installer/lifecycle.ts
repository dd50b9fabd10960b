import type { StoredDepot } from './state.js';
import { bundlesOf, type SimBundle } from './bundles.js';
import type { DepotTarget } from './depot-tls.js';
import type { BundleDownloads, DepotConnection } from './downloads.js';
import type { ServiceLog } from './log.js';
import { SYNC_STATUS, syncDepotMetadata, type SyncInfo, type SyncedMetadata } from './sync.js';

/** Where a stored depot is: its 9.1 url, or hostname and port over HTTPS. */
export function targetOf(depot: StoredDepot): DepotTarget {
  if (depot.url) {
    const url = new URL(depot.url);
    const https = url.protocol === 'https:';
    return { https, host: depot.hostname, port: depot.port, prefix: url.pathname.replace(/\/+$/, '') };
  }
  return { https: true, host: depot.hostname, port: depot.port, prefix: '' };
}

/**
 * What the installer knows of its depot beyond the settings: the last sync's
 * state, the metadata it read, the bundles the catalog offers and their
 * downloads. Kept in memory: a restarted simulator syncs again.
 */
export class DepotLifecycle {
  syncInfo: SyncInfo = { syncStatus: SYNC_STATUS.never };
  metadata?: SyncedMetadata;
  bundles: SimBundle[] = [];
  private syncing?: Promise<void>;

  constructor(
    readonly downloads: BundleDownloads,
    private readonly log: ServiceLog,
    private readonly clock: () => number,
  ) {}

  /** Starts a sync unless one is under way; the returned info is what PATCH answers. */
  startSync(connection: DepotConnection): SyncInfo {
    if (this.syncing) return this.syncInfo;
    this.syncInfo = {
      syncStatus: SYNC_STATUS.inProgress,
      ...(this.syncInfo.lastSyncCompletionTimestamp ? { lastSyncCompletionTimestamp: this.syncInfo.lastSyncCompletionTimestamp } : {}),
    };
    this.log.write('INFO', 'DepotSyncService', `Syncing the depot metadata from ${connection.target.host}:${connection.target.port}`);
    this.syncing = syncDepotMetadata(connection.target, connection.account, connection.trustedPems, this.log, connection.options)
      .then((outcome) => {
        const completed = new Date(this.clock()).toISOString();
        if (outcome.ok) {
          this.metadata = outcome.metadata;
          this.bundles = bundlesOf(outcome.metadata.catalog);
          this.syncInfo = { syncStatus: SYNC_STATUS.synced, lastSyncCompletionTimestamp: completed };
          this.log.write('INFO', 'DepotSyncService', `Depot synced: ${outcome.metadata.releases.length} releases, ${this.bundles.length} bundles`);
        } else {
          this.syncInfo = { syncStatus: SYNC_STATUS.failed, errorMessage: outcome.message, lastSyncCompletionTimestamp: completed };
        }
      })
      .finally(() => {
        this.syncing = undefined;
      });
    return this.syncInfo;
  }

  /** The depot settings were deleted: nothing synced any more (downloaded bundles stay). */
  forget(): void {
    this.syncInfo = { syncStatus: SYNC_STATUS.never };
    this.metadata = undefined;
    this.bundles = [];
  }

  bundle(id: string): SimBundle | undefined {
    return this.bundles.find((b) => b.id === id);
  }

  async close(): Promise<void> {
    await this.syncing;
    await this.downloads.close();
  }
}
