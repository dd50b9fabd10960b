import type { InstallerClient } from './client.js';
import { checkDepotSpec, pushCheckedDepot, type DepotPushOptions, type DepotPushResult, type DepotSpec } from './depot.js';
import type { CatalogDate } from './catalog-date.js';
import { releasesAfterSync } from './releases.js';
import { ensureSynced, type EnsuredSync } from './sync.js';
import { ensureTrusted, type TrustOutcome } from './trust.js';

export interface ConnectDepotOptions extends DepotPushOptions {
  /** CA certificates (PEM) the installer trusts first, as ensureTrusted imports them. */
  caPems?: string[];
  /** Have the installer sync the depot's metadata once it accepts the depot; true by default. */
  sync?: boolean;
  /** How long to wait for the sync (syncDepot's default otherwise). */
  syncTimeoutMs?: number;
  syncPollMs?: number;
  /**
   * When the depot's catalog last changed (depotCatalogDate): a consumer whose
   * settings are already right syncs again when its last sync is older (always,
   * when the depot gave no date). Absent, a consumer showing SYNCED is left alone.
   * A promise is awaited only at the sync step: asking the depot holds up no other step.
   */
  catalog?: CatalogDate | Promise<CatalogDate>;
}

/** What each step of connecting a depot did; a step not run is absent. */
export interface DepotConnection {
  /** The depot is set and, when asked, synced. */
  ok: boolean;
  trusted?: TrustOutcome[];
  push: DepotPushResult;
  sync?: EnsuredSync;
  /** The release versions the consumer lists once synced (or why they could not be listed). */
  releases?: string[];
  releasesError?: string;
}

/**
 * Connects the installer to a depot: trusts the CA that issued the depot's
 * certificate, sets the depot and, once the installer accepts it, has it sync
 * the depot's metadata (nothing is sent where a step finds its work done).
 * The sync follows only an accepted depot: a refused one has nothing to sync.
 * Once synced, the releases the consumer lists are read for the report. The
 * spec is checked first, before anything is sent.
 */
export async function connectDepot(client: InstallerClient, spec: DepotSpec, opts: ConnectDepotOptions = {}): Promise<DepotConnection> {
  return depotConnector(spec)(client, opts);
}

/**
 * One depot connected to many consumers: the spec is checked here, once, before any consumer is
 * logged in to (a spec that must not be sent costs no session and no CA imported), and the function
 * returned runs connectDepot's steps on each. The spec is read at each call, so a password the
 * caller asks for after the check goes with it (the password is not checked).
 */
export function depotConnector(spec: DepotSpec): (client: InstallerClient, opts?: ConnectDepotOptions) => Promise<DepotConnection> {
  checkDepotSpec(spec);
  return async (client, opts = {}) => {
    const trusted = opts.caPems && opts.caPems.length > 0 ? await ensureTrusted(client, opts.caPems) : undefined;
    const push = await pushCheckedDepot(client, spec, opts);
    const sync =
      (opts.sync ?? true) && push.ok
        ? await ensureSynced(client, {
            settingsChanged: push.action === 'updated',
            timeoutMs: opts.syncTimeoutMs,
            pollMs: opts.syncPollMs,
            ...(opts.catalog ? { catalog: await opts.catalog } : {}),
          })
        : undefined;
    const releases = sync?.ok ? await releasesAfterSync(client) : {};
    return { ok: push.ok && (sync?.ok ?? true), ...(trusted ? { trusted } : {}), push, ...(sync ? { sync } : {}), ...releases };
  };
}
