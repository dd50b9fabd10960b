// The installer: API client, trust import, depot push, status, fleets.
export { InstallerClient, InstallerApiError, InstallerConnectionError, parseInstallerUrl, type InstallerClientOptions, type InstallerTrust } from './client.js';
export { ensureTrusted, certificatesOf, leafTrustWarnings, trustedPem, type TrustOutcome } from './trust.js';
export { checkRole, notOnVcenter, roleWords } from './role.js';
export { removeTrusted, type UntrustOutcome, type UntrustOptions } from './untrust.js';
export {
  pushDepot,
  checkDepotSpec,
  checkDepotUrlForm,
  OPEN_DEPOT_ACCOUNT,
  depotConfiguration,
  needsUrlField,
  type DepotSpec,
  type DepotPushOptions,
  type DepotPushResult,
} from './depot.js';
export { versionAtLeast } from '../util/versions.js';
export { connectDepot, depotConnector, type ConnectDepotOptions, type DepotConnection } from './connect.js';
export {
  installerStatus,
  type InstallerStatus,
  type TrustedSummary,
  type DownloadSummary,
  type DepotCaTrust,
  type DepotCaOptions,
  type StatusOptions,
} from './status.js';
export { DEPOT_CA_WARN_DAYS } from './status-trust.js';
export { readServedChain, anchorsChain, anchorsOf, depotOriginOf } from './depot-chain.js';
export {
  syncDepot,
  ensureSynced,
  syncConsumer,
  syncFailureFix,
  type SyncOptions,
  type SyncResult,
  type EnsuredSync,
  type EnsureSyncedOptions,
  type ResyncReason,
  type ConsumerSync,
} from './sync.js';
export { listReleases, releasesAfterSync, type ReleaseSummary, type ReleasesResult } from './releases.js';
export { depotCatalogDate, syncedSince, type CatalogDate, type CatalogDateOptions } from './catalog-date.js';
export { downloadRelease, type DownloadOptions, type DownloadReport, type BundleProgress } from './download.js';
export { loadInventory, type InstallerTarget } from './inventory.js';
export { runFleet, type FleetRow, type ConsumerIdentity } from './fleet.js';
export type * from './wire.js';
export { withoutPassword } from './wire.js';
export {
  ConsumerClients,
  FleetSession,
  passwordFileWarnings,
  promptedPasswords,
  resolveTargets,
  type ConsumerClientOptions,
  type FleetSessionOptions,
  type TargetSpec,
  type VcenterTask,
} from './session.js';
export { INSTALLER_DEFAULTS } from './defaults.js';
