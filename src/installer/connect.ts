import type { InstallerClient } from './client.js';
import { pushDepot, type DepotPushOptions, type DepotPushResult, type DepotSpec } from './depot.js';
import { ensureSynced, type SyncResult } from './sync.js';
import { ensureTrusted, type TrustOutcome } from './trust.js';

export interface ConnectDepotOptions extends DepotPushOptions {
  /** CA certificates (PEM) the installer trusts first, as ensureTrusted imports them. */
  caPems?: string[];
  /** Have the installer sync the depot's metadata once it accepts the depot; true by default. */
  sync?: boolean;
  /** How long to wait for the sync (syncDepot's default otherwise). */
  syncTimeoutMs?: number;
  syncPollMs?: number;
}

/** What each step of connecting a depot did; a step not run is absent. */
export interface DepotConnection {
  /** The depot is set and, when asked, synced. */
  ok: boolean;
  trusted?: TrustOutcome[];
  push: DepotPushResult;
  sync?: SyncResult & { action: 'synced' | 'already-synced' };
}

/**
 * Connects the installer to a depot: trusts the CA that issued the depot's
 * certificate, sets the depot and, once the installer accepts it, has it sync
 * the depot's metadata (nothing is sent where a step finds its work done).
 * The sync follows only an accepted depot: a refused one has nothing to sync.
 */
export async function connectDepot(client: InstallerClient, spec: DepotSpec, opts: ConnectDepotOptions = {}): Promise<DepotConnection> {
  const trusted = opts.caPems && opts.caPems.length > 0 ? await ensureTrusted(client, opts.caPems) : undefined;
  const push = await pushDepot(client, spec, opts);
  const sync =
    (opts.sync ?? true) && push.ok
      ? await ensureSynced(client, { settingsChanged: push.action === 'updated', timeoutMs: opts.syncTimeoutMs, pollMs: opts.syncPollMs })
      : undefined;
  return { ok: push.ok && (sync?.ok ?? true), ...(trusted ? { trusted } : {}), push, ...(sync ? { sync } : {}) };
}
