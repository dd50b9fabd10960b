import type { DepotTlsClient } from './depot-tls.js';
import type { DepotLifecycle } from './lifecycle.js';
import type { ServiceLog } from './log.js';
import type { StoredDepot } from './state.js';
import type { TokenService } from './tokens.js';
import type { TrustStore } from './trust-store.js';

/** Everything the routes work on; `changed` persists it. */
export interface InstallerSimContext {
  users: Readonly<Record<string, string>>;
  tokens: TokenService;
  trust: TrustStore;
  /** The depot settings; the password only in memory, for syncs and downloads. */
  depot: { current?: StoredDepot; password?: string };
  lifecycle: DepotLifecycle;
  role: string;
  version: string;
  log: ServiceLog;
  depotTimeoutMs: number;
  /** Its TLS client to the depot, kept between connections (sessions resumed). */
  depotTls: DepotTlsClient;
  /** Host names the simulator resolves to given addresses, as curl's --resolve does. */
  resolve: ReadonlyMap<string, string>;
  changed(): Promise<void>;
}
