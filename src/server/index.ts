import { prepareDepotServer } from './prepare.js';
import type { StatusData, StatusOptions } from './status-data.js';
import type { DepotServer, DepotServerOptions, ServerHooks } from './types.js';

export { parseBasicAuth, WWW_AUTHENTICATE, type AuthLimits, type AuthOptions, type AuthVerdict, type Authenticator } from './auth.js';
export { parseHtpasswd, readHtpasswd, hashKind, type HtpasswdEntry, type HashKind } from './htpasswd.js';
export { formatCombined, formatJson, type AccessLogFormat, type AccessLogOptions, type AccessRecord } from './access-log.js';
export { normaliseOpenPrefix, parseRequestPath } from './paths.js';
export { parseRange, type ByteRange } from './range.js';
export type { TlsSource, TlsMaterial } from './tls.js';
export type { FileReadPolicy } from './file-reads.js';
export type { StatusData, StatusOptions, StatusRelease, StatusComponent, StatusFile, FileState } from './status-data.js';
export { renderStatusPage, statusReport, escapeHtml, prefersJson, STATUS_PAGE_CSP, type RenderOptions, type StatusReport } from './status-page.js';
export { aggregateMetrics, ServeMetrics, type MetricsSnapshot } from './metrics.js';
export type { DepotServer, DepotServerOptions, PreparedDepotServer, ServerHooks } from './types.js';
export { prepareDepotServer } from './prepare.js';
export { openPrefixesOf } from './root.js';

/**
 * The status page's data for the depot under `root` (see status-data.ts), for a static copy of the page
 * (`renderStatusPage`). Loaded when called: the serving processes that do not look at the depot stay small.
 */
export async function statusData(root: string, options: StatusOptions): Promise<StatusData> {
  return (await import('./status-data.js')).statusData(root, options);
}

/** Starts the depot's static file server in this process. */
export async function startDepotServer(opts: DepotServerOptions, hooks?: ServerHooks): Promise<DepotServer> {
  return (await prepareDepotServer(opts, hooks)).listen();
}
