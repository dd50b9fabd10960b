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

/**
 * The vendor's Python SDK download sample (vcf-installer-samples/bundle/
 * download_bundles_vcf_fleet_first_vcf_instance.py): the release components it keeps, by name,
 * for a fleet's first instance (get_latest_product_release_components filters `comp.name in` them).
 */
export const SDK_FIRST_INSTANCE_COMPONENTS: readonly string[] = [
  'VSP',
  'VCF_FLEET_LCM',
  'VCF_SDDC_LCM',
  'VCF_SALT_RAAS',
  'VCF_SALT',
  'TELEMETRY_ACCEPTOR',
  'DEPOT_SERVICE',
  'VIDB',
  'VCF_SERVICE_VCD_MIGRATION_BACKEND',
  'VCF_LICENSE_SERVER',
  'VROPS',
  'VCF_OPS_CLOUD_PROXY',
  'VRA',
  'VCENTER',
  'NSX_T_MANAGER',
  'SDDC_MANAGER',
];

/**
 * The vendor's Ansible collection (broadcom.vcf, playbooks/add_bundles_installer.yml,
 * `_component_api_map`): a component asked for by its friendly name, as the API name the
 * playbook then selects download-status rows by (`selectattr('componentType', 'in', ...)`).
 */
export const ANSIBLE_COMPONENT_API_MAP: Readonly<Record<string, string>> = {
  nsx: 'NSX_T_MANAGER',
  'sddc-manager': 'SDDC_MANAGER',
  vcenter: 'VCENTER',
  'vcf-automation': 'VRA',
  'vcf-operations': 'VROPS',
  'vcf-operations-fleet': 'VRSLCM',
  'cloud-proxy': 'VCF_OPS_CLOUD_PROXY',
};
