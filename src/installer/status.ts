import { BUNDLE_DOWNLOAD_STATUS } from '../constants.js';
import { InstallerApiError, type InstallerClient } from './client.js';
import { depotCaTrust, depotCaUnknownReason, summariseTrusted, type DepotCaOptions, type DepotCaTrust, type TrustedSummary } from './status-trust.js';
import type { ApplianceInfo, BundleDownloadStatusInfo, DepotSettings, DepotSyncInfo } from './wire.js';

export type { TrustedSummary, DepotCaTrust, DepotCaOptions };

export interface DownloadSummary {
  /** Bundles per download status (PENDING, SUCCESS, FAILED, ...). */
  byStatus: Record<string, number>;
  failed: Array<{ bundleId: string; component?: string; message?: string }>;
}

export interface InstallerStatus {
  appliance: ApplianceInfo;
  depot: DepotSettings;
  /** The depot sync's state; absent where the installer has no sync operation. */
  sync?: DepotSyncInfo;
  /** The bundles' downloads; absent where the installer has no download status operation. */
  downloads?: DownloadSummary;
  trusted: TrustedSummary[];
  /** Whether the depot's CA is trusted; absent when the depot's CA is neither given nor readable from the depot. */
  depotCa?: DepotCaTrust;
  /** Why `depotCa` is absent: what kept the depot's CA from being looked for. */
  depotCaUnknown?: string;
}

export interface StatusOptions extends DepotCaOptions {
  /** What appliance-info answered, when the caller has read it in this session (FleetSession does): not asked again. */
  appliance?: ApplianceInfo;
}

/** undefined when the installer does not have the operation (404, or an answer of another shape), else the value. */
async function optional<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof InstallerApiError && (err.status === 404 || err.status < 300)) return undefined;
    throw err;
  }
}

function summarise(rows: BundleDownloadStatusInfo[]): DownloadSummary {
  const byStatus: Record<string, number> = {};
  for (const r of rows) byStatus[r.downloadStatus] = (byStatus[r.downloadStatus] ?? 0) + 1;
  const failed = rows
    .filter((r) => r.downloadStatus === BUNDLE_DOWNLOAD_STATUS.failed)
    .map((r) => ({ bundleId: r.bundleId, ...(r.componentType ? { component: r.componentType } : {}), ...(r.message ? { message: r.message } : {}) }));
  return { byStatus, failed };
}

/**
 * Appliance info, depot settings and status, the depot sync, the downloads,
 * the trusted certificates (subject, issuer, SHA-256, days left) and whether
 * the depot's CA is among them.
 */
export async function installerStatus(client: InstallerClient, opts: StatusOptions = {}): Promise<InstallerStatus> {
  const appliance = opts.appliance ?? (await client.applianceInfo());
  const depot = await client.getDepotSettings();
  const sync = await optional(() => client.getSyncInfo());
  const downloads = await optional(async () => summarise(await client.downloadStatus()));
  const elements = (await client.listTrusted()).elements;
  const trusted = summariseTrusted(elements, opts.now);
  const depotCa = await depotCaTrust(elements, trusted, depot, opts);
  const known = depotCa ? { depotCa } : { depotCaUnknown: depotCaUnknownReason(depot) };
  return { appliance, depot, ...(sync ? { sync } : {}), ...(downloads ? { downloads } : {}), trusted, ...known };
}
