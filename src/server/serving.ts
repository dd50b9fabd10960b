// A server prepared and not yet listening, as preparing (prepare.ts) makes it and listening (listen.ts)
// takes it: a module of its own so that neither phase imports the other's types in a circle.
import type { Server } from 'node:http';
import type { AccessLog } from './access-log.js';
import type { Authenticator } from './auth.js';
import type { ConnectionTracker } from './connections.js';
import type { ServeMetrics } from './metrics.js';
import type { PageSources } from './pages.js';
import type { StatusData } from './status-data.js';
import type { TlsMaterial } from './tls.js';
import type { DepotServerOptions, ServerHooks } from './types.js';

/** A serving process once prepared: what listening and serving need. */
export interface Serving {
  opts: DepotServerOptions;
  hooks: ServerHooks;
  host: string;
  /** The open prefixes as given (normalised), which the status page lists. */
  given: string[];
  material?: TlsMaterial;
  auth?: Authenticator;
  log?: AccessLog;
  metrics: ServeMetrics;
  server: Server;
  tracker: ConnectionTracker;
  pages: PageSources;
  /** The certificate now served (reloadTls replaces it), which the status page describes. */
  certPem?: string;
  /** The last look at the depot, when this process looks itself (set once listening: the URL needs the port). */
  ownStatus?: Promise<StatusData | undefined>;
}
