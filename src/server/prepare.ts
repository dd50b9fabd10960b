import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { usageError } from '../util/errors.js';
import { openAccessLog } from './access-log.js';
import { createAuthenticator } from './auth.js';
import { ConnectionTracker } from './connections.js';
import { createHandler } from './handler.js';
import { listenDepotServer } from './listen.js';
import { aggregateMetrics, ServeMetrics } from './metrics.js';
import { esxMetrics } from './metrics-esx.js';
import { releaseMetrics } from './metrics-releases.js';
import type { PageSources } from './pages.js';
import { openPrefixesOf, realRootOf, resolvedOpenPrefixes } from './root.js';
import { loadTlsMaterial, secureOptions } from './tls.js';
import type { DepotServerOptions, PreparedDepotServer, ServerHooks } from './types.js';
import type { Serving } from './serving.js';

/** Everything of a server that takes time (root, users, certificate, log), without listening yet. */
export async function prepareDepotServer(opts: DepotServerOptions, hooks: ServerHooks = {}): Promise<PreparedDepotServer> {
  // Basic credentials are only base64: over plain HTTP anyone on the path reads the password.
  if (opts.auth && !opts.tls && !opts.allowPlainHttpAuth)
    throw usageError('Basic auth over plain HTTP would send the password in clear text.', 'Serve over TLS (a certificate and key), or without auth.');
  const given = openPrefixesOf(opts);
  const realRoot = await realRootOf(opts.root);
  const openPrefixes = await resolvedOpenPrefixes(realRoot, given);
  const material = opts.tls ? await loadTlsMaterial(opts.tls) : undefined;
  // Last of what may fail: it starts a thread for bcrypt.
  const auth = opts.auth ? await createAuthenticator(opts.auth, opts.authLimits) : undefined;
  const log = opts.accessLog ? openAccessLog(opts.accessLog) : undefined;
  // Reads the certificate now served, which a reload replaces.
  const metrics = new ServeMetrics(() => serving.certPem);
  const server: Server = material ? createHttpsServer(secureOptions(material)) : createHttpServer();
  const tracker = new ConnectionTracker(server, material !== undefined);
  const serving: Serving = {
    opts,
    hooks,
    host: opts.host ?? '127.0.0.1',
    given,
    material,
    auth,
    log,
    metrics,
    server,
    tracker,
    pages: pagesOf(),
    certPem: material?.certPem,
  };
  const handler = createHandler({
    realRoot,
    auth,
    openPrefixes,
    readBuffer: opts.readBuffer,
    fileReads: opts.fileReads,
    sendTimeoutMs: opts.sendTimeoutMs,
    isClosing: () => tracker.isClosing,
    log,
    metrics,
    pages: serving.pages,
  });
  server.on('request', tracker.wrap(handler));
  // Counted only: the https server's own listener still ends the connection.
  if (material) server.on('tlsClientError', (err: NodeJS.ErrnoException) => metrics.tlsFailure(err));
  return { listen: (shared) => listenDepotServer(serving, shared) };

  function pagesOf(): PageSources {
    const pagesStatus = () => (hooks.status ? Promise.resolve(hooks.status()) : (serving.ownStatus ?? Promise.resolve(undefined)));
    return {
      status: pagesStatus,
      metricsText: async () => {
        // The releases once, from the process that answers: every process would report the same.
        const status = await pagesStatus();
        const own = [...metrics.snapshot(), ...releaseMetrics(status), ...esxMetrics(status)];
        return hooks.collectMetrics ? hooks.collectMetrics(own) : aggregateMetrics([own]);
      },
      metricsOpen: opts.metricsOpen ?? false,
    };
  }
}
