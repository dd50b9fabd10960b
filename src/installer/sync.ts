import { DEPOT_PATHS, DEPOT_SYNC_STATUS, INSTALLER_ERROR_CODES, INSTALLER_MESSAGES } from '../constants.js';
import { DepotkitError, EXIT } from '../util/errors.js';
import type { InstallerClient } from './client.js';
import type { DepotSyncInfo } from './wire.js';
import { syncedSince, type CatalogDate } from './catalog-date.js';
import { releasesAfterSync } from './releases.js';
import { INSTALLER_DEFAULTS } from './defaults.js';

export interface SyncOptions {
  /** How long to wait for the sync to end; 10 minutes by default (a real sync reads the whole catalog). */
  timeoutMs?: number;
  /** The longest wait between two status reads (1 s by default); the first waits FIRST_SYNC_POLL_MS, each next one twice as long. */
  pollMs?: number;
}

/**
 * The first wait for a sync's status. A sync that is quick to end (a small depot, one nearby) is
 * seen ended a few tenths of a second after it is, not a whole poll interval later: over a fleet,
 * that second was most of each consumer's time in a connect-depot.
 */
const FIRST_SYNC_POLL_MS = 100;

export interface SyncResult {
  ok: boolean;
  status: string;
  completedAt?: string;
  /** The installer's errorMessage when the sync failed. */
  message?: string;
  /** What to do about a failed sync, with the depotkit command that names the missing file. */
  fix?: string;
}

const FINAL: readonly string[] = [DEPOT_SYNC_STATUS.synced, DEPOT_SYNC_STATUS.failed];

/** The fix for a failed sync, from the installer's words. */
export function syncFailureFix(message: string | undefined): string {
  const text = message ?? '';
  const verify = 'run depotkit depot verify <depot-dir> on the depot host: it names every missing or misplaced file';
  if (text.includes(INSTALLER_ERROR_CODES.manifestNotFound)) {
    return `The depot has no manifest at ${DEPOT_PATHS.manifest} (verify's layout.file.missing): lay out the vendor's metadata archive with \`buildDepot\` \`metadata\` <archive> \`binaries\` <folder> \`out\` <depot-dir>, then ${verify}.`;
  }
  if (text.toLowerCase().includes(INSTALLER_MESSAGES.compatibilityDownloadFailed.toLowerCase())) {
    return `The depot lacks the Compatibility data at ${DEPOT_PATHS.compatibility} (verify's layout.file.missing): it is in the vendor's metadata archive (\`buildDepot\` \`metadata\` <archive> \`binaries\` <folder> \`out\` <depot-dir> lays it out); ${verify}.`;
  }
  return `Check the depot as the installer reads it: \`checkDepot\` <depot-url> \`caPems\` <ca> \`user\` <user> \`passwordFile\` <file>, and ${verify}.`;
}

/**
 * Has the installer sync the depot's metadata and waits for the verdict. The
 * wait ends on SYNCED or SYNC_FAILED with a completion time other than the
 * previous sync's (a status read before the new sync started does not count).
 */
export async function syncDepot(client: InstallerClient, opts: SyncOptions = {}): Promise<SyncResult> {
  const before = await client.getSyncInfo();
  await client.startSync();
  const deadline = Date.now() + (opts.timeoutMs ?? INSTALLER_DEFAULTS.syncTimeoutMs);
  const longest = opts.pollMs ?? 1000;
  let wait = Math.min(FIRST_SYNC_POLL_MS, longest);
  let seenRunning = false;
  for (;;) {
    const info: DepotSyncInfo = await client.getSyncInfo();
    const final = FINAL.includes(info.syncStatus);
    if (!final) seenRunning = true;
    else if (seenRunning || info.lastSyncCompletionTimestamp !== before.lastSyncCompletionTimestamp) {
      const ok = info.syncStatus === DEPOT_SYNC_STATUS.synced;
      return {
        ok,
        status: info.syncStatus,
        ...(info.lastSyncCompletionTimestamp ? { completedAt: info.lastSyncCompletionTimestamp } : {}),
        ...(ok ? {} : { message: info.errorMessage, fix: syncFailureFix(info.errorMessage) }),
      };
    }
    if (Date.now() >= deadline) {
      throw new DepotkitError(
        `The installer's depot sync did not end within ${Math.round((opts.timeoutMs ?? INSTALLER_DEFAULTS.syncTimeoutMs) / 1000)} s (status ${info.syncStatus}).`,
        EXIT.problems,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
    wait = Math.min(wait * 2, longest);
  }
}

/** Why a consumer whose settings did not change was synced again. */
export type ResyncReason = 'catalog-changed' | 'catalog-undated';

export interface EnsureSyncedOptions extends SyncOptions {
  settingsChanged: boolean;
  /**
   * When the depot's catalog last changed (catalog-date.ts): a consumer that
   * shows SYNCED from before then syncs again; given without a date, every
   * consumer does. Absent, SYNCED is taken as up to date.
   */
  catalog?: CatalogDate;
}

export type EnsuredSync = SyncResult & {
  action: 'synced' | 'already-synced' | 'resynced';
  /** With resynced: why, and when the sync before it had ended. */
  reason?: ResyncReason;
  previousSyncAt?: string;
  /** With catalog-undated: why the depot gave no date (catalog-date.ts's note). */
  catalogNote?: string;
};

/**
 * The depot synced: nothing is sent when the installer already shows SYNCED,
 * the depot settings did not change (`settingsChanged` false) and, when the
 * catalog's date is given, that sync ended after it; otherwise a sync as
 * syncDepot runs it.
 */
export async function ensureSynced(client: InstallerClient, opts: EnsureSyncedOptions): Promise<EnsuredSync> {
  if (!opts.settingsChanged) {
    const info = await client.getSyncInfo();
    if (info.syncStatus === DEPOT_SYNC_STATUS.synced) {
      const last = info.lastSyncCompletionTimestamp;
      const stale = opts.catalog && (opts.catalog.lastModified === undefined || !syncedSince(last, opts.catalog.lastModified));
      if (!stale) return { action: 'already-synced', ok: true, status: info.syncStatus, ...(last ? { completedAt: last } : {}) };
      const undated = opts.catalog?.lastModified === undefined;
      const why = undated
        ? { reason: 'catalog-undated' as const, ...(opts.catalog?.note ? { catalogNote: opts.catalog.note } : {}) }
        : { reason: 'catalog-changed' as const };
      return { action: 'resynced', ...why, ...(last ? { previousSyncAt: last } : {}), ...(await syncDepot(client, opts)) };
    }
  }
  return { action: 'synced', ...(await syncDepot(client, opts)) };
}

/** A sync asked for and its verdict, with the releases the consumer lists after a successful one. */
export type ConsumerSync = SyncResult & { releases?: string[]; releasesError?: string };

/**
 * Has the consumer sync the depot it is set to, whatever it shows now, and
 * waits for SYNCED or SYNC_FAILED (a failure comes with its fix); once
 * synced, reads the releases it lists.
 */
export async function syncConsumer(client: InstallerClient, opts: SyncOptions = {}): Promise<ConsumerSync> {
  const result = await syncDepot(client, opts);
  return result.ok ? { ...result, ...(await releasesAfterSync(client)) } : result;
}
