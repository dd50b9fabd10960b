/** The installer API's JSON shapes (OpenAPI subset 9.0.2.0 plus the 9.1 `url` and the 9.1.1 `trustedCertificates`), shared by the client and the simulator. */
import { isObject } from '../util/json.js';
import { registerSecret } from '../util/scrub.js';

export { isObject };

export interface TokenPair {
  accessToken: string;
  refreshToken: { id: string };
}

export interface TrustedCertificate {
  alias: string;
  certificate: string;
}

export interface PageMetadata {
  pageNumber: number;
  pageSize: number;
  totalElements: number;
  totalPages: number;
}

export interface PageOfTrustedCertificate {
  elements: TrustedCertificate[];
  pageMetadata?: PageMetadata;
}

export interface DepotAccount {
  username?: string;
  password?: string;
  status?: string;
  message?: string;
}

export interface DepotConfiguration {
  isOfflineDepot: boolean;
  hostname?: string;
  port?: number;
  /** 9.1: `http(s)://host[:port][/prefix]` instead of hostname and port. */
  url?: string;
  /** 9.1.1: PEM certificates the appliance adds to its trust stores for an HTTPS depot. */
  trustedCertificates?: string[];
}

export interface DepotSettings {
  offlineAccount?: DepotAccount;
  depotConfiguration?: DepotConfiguration;
}

export interface ApplianceInfo {
  role: string;
  version: string;
}

/** `GET /v1/system/settings/depot/depot-sync-info`. */
export interface DepotSyncInfo {
  syncStatus: string;
  errorMessage?: string;
  lastSyncCompletionTimestamp?: string;
}

export interface BundleInfo {
  id: string;
  name: string;
  size: number;
  type: string;
}

/** `GET /v1/releases` elements (the fields read; `bom` and the rest are left as answered). */
export interface Release {
  product?: string;
  version: string;
  releaseDate?: string;
  description?: string;
  minInstallerVersion?: string;
}

/** `GET /v1/releases/{sku}/release-components` elements. */
export interface ReleaseComponentDetail {
  releaseVersion: string;
  components: Array<{ name: string; publicName?: string; versions?: Array<{ productVersion: string; artifacts: { bundles: BundleInfo[] } }> }>;
}

/** `GET /v1/bundles/download-status` elements. */
export interface BundleDownloadStatusInfo {
  bundleId: string;
  componentType?: string;
  version?: string;
  downloadStatus: string;
  downloadedSize?: number;
  message?: string;
}

/** The error body of every installer operation (see docs/interfaces.md). */
export interface InstallerErrorBody {
  errorCode: string;
  errorType: string;
  arguments: string[];
  context: Record<string, string>;
  message: string;
  remediationMessage?: string;
  causes: Array<{ type: string; message: string }>;
  nestedErrors: InstallerErrorBody[];
  referenceToken: string;
}

/** The error fields a client can show, from any body; undefined when it is not an installer error. */
export function parseErrorBody(body: unknown): { errorCode: string; message?: string; remediationMessage?: string } | undefined {
  if (!isObject(body) || typeof body.errorCode !== 'string') return undefined;
  return {
    errorCode: body.errorCode,
    message: typeof body.message === 'string' ? body.message : undefined,
    remediationMessage: typeof body.remediationMessage === 'string' ? body.remediationMessage : undefined,
  };
}

/**
 * A refresh token id as sent in a body: a JSON string per the spec, or the raw
 * id as a widely used client sends it.
 */
export function parseTokenIdBody(text: string): string {
  const trimmed = text.trim();
  if (trimmed.startsWith('"')) {
    try {
      const value: unknown = JSON.parse(trimmed);
      if (typeof value === 'string') return value.trim();
    } catch {
      // Not JSON after all: taken raw below.
    }
  }
  return trimmed;
}

/**
 * Depot settings with offlineAccount.password removed, whatever the installer answered: never
 * reported; and hidden by the scrub wherever else the installer repeats it (its account message).
 */
export function withoutPassword(settings: DepotSettings): DepotSettings {
  if (!isObject(settings.offlineAccount)) return settings;
  const { password, ...account } = settings.offlineAccount as DepotAccount;
  if (typeof password === 'string') registerSecret(password);
  return { ...settings, offlineAccount: account };
}
