/** What public clients of the depot API read in a consumer's depot settings, as they read it. */

/** A consumer's depot settings as GET /v1/system/settings/depot answers them (the fields these clients read). */
export interface DepotView {
  offlineAccount?: { username?: string; status?: string; message?: string };
  vmwareAccount?: { status?: string; downloadToken?: string; downloadActivationCode?: string };
  depotConfiguration?: { isOfflineDepot?: boolean; hostname?: string; port?: number; url?: string };
}

/** The vendor's Ansible module sddc_manager_depot: which depot a consumer already has (null: none, so it configures one). */
export function ansibleDepotType(view: DepotView | undefined): 'online' | 'offline' | null {
  if (!view) return null;
  if (view.depotConfiguration) return view.depotConfiguration.isOfflineDepot ? 'offline' : 'online';
  const online = view.vmwareAccount;
  if (online && (online.status || online.downloadToken || online.downloadActivationCode)) return 'online';
  const offline = view.offlineAccount;
  if (offline && (offline.status || offline.username)) return 'offline';
  return null;
}

/**
 * The vendor's Python SDK download sample (vcf-installer-samples/utils/download_bundles_util.py):
 * the errorCodes of a refused download request it takes as "already asked for" and goes on.
 */
export const SDK_DOWNLOAD_ERRORS_TO_IGNORE: readonly string[] = [
  'BUNDLE_DOWNLOAD_ALREADY_SCHEDULED',
  'BUNDLE_DOWNLOAD_ALREADY_DOWNLOADED',
  'BUNDLE_DOWNLOAD_NOT_AVAILABLE',
];

/** The same sample's poll of the downloads: done when every bundle it asked for is SUCCESS; FAILED or CANCELLED raises. */
export function sdkBundlesDownloaded(rows: Array<{ bundleId: string; downloadStatus: string }>, ids: readonly string[]): boolean {
  let all = true;
  for (const row of rows.filter((r) => ids.includes(r.bundleId))) {
    if (row.downloadStatus === 'FAILED' || row.downloadStatus === 'CANCELLED') throw new Error(`bundle ${row.bundleId} ended ${row.downloadStatus}`);
    if (row.downloadStatus !== 'SUCCESS') all = false;
  }
  return all;
}
