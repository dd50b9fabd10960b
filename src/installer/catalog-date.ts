import { DEPOT_PATHS } from '../constants.js';
import { parseDepotUrl, depotFileUrl } from '../util/depot-url.js';
import { NetAgent, basicAuthorization, describeNetworkFailure, networkErrorCode, requestText } from '../net/index.js';
import { NETWORK_LIMITS } from '../util/limits.js';
import { INSTALLER_DEFAULTS } from './defaults.js';
import type { DepotSpec } from './depot.js';

/**
 * When the depot's catalog last changed, as the depot says it (the
 * Last-Modified of the product version catalog); without it, `note` says why.
 */
export interface CatalogDate {
  lastModified?: Date;
  note?: string;
}

export interface CatalogDateOptions {
  /** The CA certificates (PEM) that verify the depot's HTTPS; the system's store when absent. */
  caPems?: string[];
  timeoutMs?: number;
}

/**
 * Asks the depot when its catalog last changed: a HEAD of the product version
 * catalog with the depot's account, as the consumers read it. Never throws:
 * a depot that cannot be asked, or gives no date, gives none, and the caller
 * re-syncs every consumer (the safe side).
 */
export async function depotCatalogDate(spec: DepotSpec, opts: CatalogDateOptions = {}): Promise<CatalogDate> {
  let url: URL;
  try {
    const base = spec.url ?? `https://${spec.hostname}:${spec.port ?? INSTALLER_DEFAULTS.depotPort}`;
    url = new URL(depotFileUrl(parseDepotUrl(base).url, DEPOT_PATHS.catalog));
  } catch (err) {
    return { note: `the depot's address cannot be read here (${(err as Error).message})` };
  }
  const timeout = opts.timeoutMs ?? INSTALLER_DEFAULTS.timeoutMs;
  const trust = opts.caPems && opts.caPems.length > 0 ? { trust: { caPems: opts.caPems } } : {};
  const agent = new NetAgent({ timeoutMs: timeout, ...(url.protocol === 'https:' ? { tls: { ...trust, rejectUnauthorized: true } } : {}) });
  try {
    const headers: Record<string, string> = spec.username ? { authorization: basicAuthorization(spec.username, spec.password ?? '') } : {};
    const res = await requestText(url, { method: 'HEAD', headers, agent, timeoutMs: timeout, maxBytes: NETWORK_LIMITS.apiAnswerBytes });
    if (res.status !== 200) return { note: `the depot answered HTTP ${res.status} for its catalog` };
    const header = res.headers['last-modified'];
    const date = typeof header === 'string' ? new Date(header) : undefined;
    if (!date || Number.isNaN(date.getTime())) return { note: 'the depot gives no date for its catalog' };
    return { lastModified: date };
  } catch (err) {
    return { note: `the depot cannot be reached from here: ${describeNetworkFailure(networkErrorCode(err), err)}` };
  } finally {
    agent.destroy();
  }
}

/** Last-Modified counts whole seconds: a sync within the second of the change may have read the old catalog. */
const DATE_GRAIN_MS = 1000;

/**
 * Whether a consumer whose last sync ended at `lastSync` (its
 * lastSyncCompletionTimestamp) has read the catalog dated `catalog`. A time
 * it gives that cannot be read counts as not.
 */
export function syncedSince(lastSync: string | undefined, catalog: Date): boolean {
  if (lastSync === undefined) return false;
  const ms = /^\d+$/.test(lastSync.trim()) ? Number(lastSync) : Date.parse(lastSync);
  return !Number.isNaN(ms) && ms >= catalog.getTime() + DATE_GRAIN_MS;
}
