// The installer: API client, trust import, depot push, status, fleets.
export { InstallerClient, InstallerApiError, InstallerConnectionError, parseInstallerUrl, type InstallerClientOptions, type InstallerTrust } from './client.js';
export { ensureTrusted, certificatesOf, leafTrustWarnings, type TrustOutcome } from './trust.js';
export {
  pushDepot,
  checkDepotSpec,
  OPEN_DEPOT_ACCOUNT,
  depotConfiguration,
  needsUrlField,
  versionAtLeast,
  type DepotSpec,
  type DepotPushOptions,
  type DepotPushResult,
} from './depot.js';
export { connectDepot, type ConnectDepotOptions, type DepotConnection } from './connect.js';
export { installerStatus, type InstallerStatus, type TrustedSummary, type DownloadSummary } from './status.js';
export { syncDepot, ensureSynced, syncFailureFix, type SyncOptions, type SyncResult } from './sync.js';
export { downloadRelease, type DownloadOptions, type DownloadReport, type BundleProgress } from './download.js';
export { loadInventory, type InstallerTarget } from './inventory.js';
export { runFleet, type FleetRow } from './fleet.js';
export type * from './wire.js';
export { withoutPassword } from './wire.js';
export { FleetSession, resolveTargets, type FleetSessionOptions, type TargetSpec } from './session.js';
export { INSTALLER_DEFAULTS } from './defaults.js';
