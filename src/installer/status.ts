import { X509Certificate } from 'node:crypto';
import { sha256Fingerprint } from '../pki/index.js';
import { BUNDLE_DOWNLOAD_STATUS } from '../constants.js';
import { InstallerApiError, type InstallerClient } from './client.js';
import type { ApplianceInfo, BundleDownloadStatusInfo, DepotSettings, DepotSyncInfo } from './wire.js';

export interface TrustedSummary {
  alias: string;
  subject?: string;
  issuer?: string;
  notAfter?: string;
  sha256?: string;
}

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

/** Appliance info, depot settings and status, the depot sync, the downloads and the trusted certificates. */
export async function installerStatus(client: InstallerClient): Promise<InstallerStatus> {
  const appliance = await client.applianceInfo();
  const depot = await client.getDepotSettings();
  const sync = await optional(() => client.getSyncInfo());
  const downloads = await optional(async () => summarise(await client.downloadStatus()));
  const trusted = (await client.listTrusted()).elements.map((e): TrustedSummary => {
    try {
      const cert = new X509Certificate(e.certificate);
      return {
        alias: e.alias,
        subject: cert.subject.replace(/\n/g, ', '),
        issuer: cert.issuer.replace(/\n/g, ', '),
        notAfter: new Date(cert.validTo).toISOString(),
        sha256: sha256Fingerprint(e.certificate),
      };
    } catch {
      return { alias: e.alias };
    }
  });
  return { appliance, depot, ...(sync ? { sync } : {}), ...(downloads ? { downloads } : {}), trusted };
}
