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
