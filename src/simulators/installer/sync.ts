import { DEPOT_PATHS, DEPOT_SYNC_STATUS, INSTALLER_ERROR_CODES, INSTALLER_MESSAGES } from '../../constants.js';
import { parseCatalog, type Catalog } from '../../depot/catalog.js';
import { isObject } from './wire.js';
import { MAX_CATALOG_BYTES, accountHeaders, networkFailure, readCapped, targetUrl } from './depot-probe.js';
import { depotAgent, depotRequest, type DepotConnectOptions, type DepotTarget } from './depot-tls.js';
import type { ServiceLog } from './log.js';

/** The simulator's own words for the states between the documented SYNCED and SYNC_FAILED. */
export const SYNC_STATUS = { ...DEPOT_SYNC_STATUS, inProgress: 'SYNC_IN_PROGRESS', never: 'NOT_SYNCED' } as const;

/** A release as the depot's manifest lists it. */
export interface ManifestRelease {
  version: string;
  releaseDate?: string;
  minInstallerVersion?: string;
  bom: Array<{ name: string; version: string }>;
}

/** What a successful sync read from the depot. */
export interface SyncedMetadata {
  releases: ManifestRelease[];
  catalog: Catalog;
}

export interface SyncInfo {
  syncStatus: string;
  errorMessage?: string;
  lastSyncCompletionTimestamp?: string;
}

const COMPONENT = 'DepotSyncService';

class SyncFailure extends Error {}

/** The manifest's releases; anything it cannot use is a sync failure. */
function manifestReleases(text: string): ManifestRelease[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new SyncFailure(`${INSTALLER_ERROR_CODES.manifestNotFound}: the LCM manifest ${DEPOT_PATHS.manifest} is not JSON.`);
  }
  const releases = isObject(value) && Array.isArray(value.releases) ? value.releases : undefined;
  if (!releases) throw new SyncFailure(`${INSTALLER_ERROR_CODES.manifestNotFound}: the LCM manifest ${DEPOT_PATHS.manifest} lists no releases.`);
  return releases.filter(
    (r): r is ManifestRelease =>
      isObject(r) &&
      typeof r.version === 'string' &&
      Array.isArray(r.bom) &&
      r.bom.every((b) => isObject(b) && typeof b.name === 'string' && typeof b.version === 'string'),
  );
}

/**
 * Reads the depot's metadata as the installer's sync does: the manifest, the
 * catalog and its signature, the Compatibility data and the vSAN HCL, each
 * with the offline account's credentials over the installer's TLS rules.
 */
export async function syncDepotMetadata(
  target: DepotTarget,
  account: { username?: string; password?: string },
  trustedPems: string[],
  log: ServiceLog,
  opts: DepotConnectOptions,
): Promise<{ ok: true; metadata: SyncedMetadata } | { ok: false; message: string }> {
  const agent = depotAgent(target, trustedPems, opts);
  const headers = accountHeaders(account);
  const fetchText = async (path: string, missing: (status: number) => string): Promise<string> => {
    const url = targetUrl(target, path);
    const res = await depotRequest(url, { method: 'GET', headers, agent });
    const text = await readCapped(res.body, MAX_CATALOG_BYTES);
    log.write('INFO', COMPONENT, `GET ${url} -> ${res.statusCode}`);
    if (res.statusCode !== 200) throw new SyncFailure(missing(res.statusCode));
    if (text === undefined) throw new SyncFailure(`${path} is larger than ${MAX_CATALOG_BYTES} bytes.`);
    return text;
  };
  try {
    const releases = manifestReleases(
      await fetchText(
        DEPOT_PATHS.manifest,
        (status) => `${INSTALLER_ERROR_CODES.manifestNotFound}: LCM manifest not found in the depot (HTTP ${status} for ${DEPOT_PATHS.manifest}).`,
      ),
    );
    const catalogText = await fetchText(
      DEPOT_PATHS.catalog,
      (status) => `The product version catalog could not be downloaded (HTTP ${status} for ${DEPOT_PATHS.catalog}).`,
    );
    let catalog: Catalog;
    try {
      catalog = parseCatalog(catalogText);
    } catch (err) {
      throw new SyncFailure(`The product version catalog cannot be read: ${(err as Error).message}`);
    }
    await fetchText(
      DEPOT_PATHS.catalogSig,
      (status) => `The product version catalog signature could not be downloaded (HTTP ${status} for ${DEPOT_PATHS.catalogSig}).`,
    );
    await fetchText(
      DEPOT_PATHS.compatibility,
      (status) => `${INSTALLER_MESSAGES.compatibilityDownloadFailed} (HTTP ${status} for ${DEPOT_PATHS.compatibility}).`,
    );
    for (const hcl of [DEPOT_PATHS.hclAll, DEPOT_PATHS.hclLastUpdated]) {
      await fetchText(hcl, (status) => `vSAN HCL download failed (HTTP ${status} for ${hcl}).`);
    }
    return { ok: true, metadata: { releases, catalog } };
  } catch (err) {
    if (err instanceof SyncFailure) {
      log.write('ERROR', COMPONENT, `Depot sync failed: ${err.message}`);
      return { ok: false, message: err.message };
    }
    const failure = networkFailure(err, target, `${target.host}:${target.port}`, log);
    return { ok: false, message: failure.ok ? 'The depot could not be read.' : `${failure.message} ${failure.cause}` };
  } finally {
    agent.destroy();
  }
}
