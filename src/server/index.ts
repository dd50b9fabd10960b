import { realpath, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { relative, sep } from 'node:path';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { DEPOT_PATHS } from '../constants.js';
import { describeFsError, usageError } from '../util/errors.js';
import { listenOn } from '../util/listen.js';
import { openAccessLog, type AccessLog, type AccessLogOptions } from './access-log.js';
import { createAuthenticator, type AuthLimits, type AuthOptions } from './auth.js';
import { ConnectionTracker } from './connections.js';
import { createHandler } from './handler.js';
import { aggregateMetrics, ServeMetrics, type MetricsSnapshot } from './metrics.js';
import type { PageSources } from './pages.js';
import { normaliseOpenPrefix, resolveInsideRoot } from './paths.js';
import type { StatusData, StatusOptions } from './status-data.js';
import { loadTlsMaterial, secureOptions, type TlsMaterial, type TlsSource } from './tls.js';

export { parseBasicAuth, WWW_AUTHENTICATE, type AuthLimits, type AuthOptions, type AuthVerdict, type Authenticator } from './auth.js';
export { parseHtpasswd, readHtpasswd, hashKind, type HtpasswdEntry, type HashKind } from './htpasswd.js';
export { formatCombined, formatJson, type AccessLogFormat, type AccessLogOptions, type AccessRecord } from './access-log.js';
export { normaliseOpenPrefix, parseRequestPath } from './paths.js';
export { parseRange, type ByteRange } from './range.js';
export type { TlsSource, TlsMaterial } from './tls.js';
export type { StatusData, StatusOptions, StatusRelease, StatusComponent, StatusFile, FileState } from './status-data.js';
export { renderStatusPage, statusReport, escapeHtml, prefersJson, STATUS_PAGE_CSP, type RenderOptions, type StatusReport } from './status-page.js';
export { aggregateMetrics, ServeMetrics, type MetricsSnapshot } from './metrics.js';

/**
 * The status page's data for the depot under `root` (see status-data.ts), for a static copy of the page
 * (`renderStatusPage`). Loaded when called: the serving processes that do not look at the depot stay small.
 */
export async function statusData(root: string, options: StatusOptions): Promise<StatusData> {
  return (await import('./status-data.js')).statusData(root, options);
}

export interface DepotServerOptions {
  /** The web root: the folder that contains PROD/. */
  root: string;
  /** Address to listen on; default 127.0.0.1. */
  host?: string;
  /** Port; default 0 (any free port). */
  port?: number;
  /** Certificate and key; without them the server speaks plain HTTP. */
  tls?: TlsSource;
  /** Basic auth for every path (HEAD exactly like GET); none when absent. */
  auth?: AuthOptions;
  /** Limits of the password checks (failures per client address, bcrypt threads and queue); defaults from constants. */
  authLimits?: AuthLimits;
  /**
   * Path prefixes under the root left without auth when auth is on, by whole
   * segments (`umds-patch-store`, `PROD/vsan/hcl`): relative, normalised, no
   * `..` or dot segment (a usage error otherwise). What a request resolves to
   * decides, so a symlink under an open prefix into the protected tree stays
   * protected; a prefix that is itself a symlink inside the root opens its target.
   */
  openPrefixes?: string[];
  /** Leave PROD/vsan/hcl open when auth is on, as the vendor's web-server recipe does: one of `openPrefixes`. */
  openHcl?: boolean;
  /** Access log: a file (appended to) or '-' for stdout, combined format or JSON lines. */
  accessLog?: AccessLogOptions;
  /** Size of each of the two read buffers of a download in bytes; default SERVE_READ_BUFFER (256 KiB). */
  readBuffer?: number;
  /**
   * Milliseconds a download may make no progress (no write to the client completes) before it is cut and
   * its file descriptor released; default SERVE_DEFAULT_SEND_TIMEOUT_SECONDS (60 s, as nginx's send_timeout); 0: never.
   */
  sendTimeoutMs?: number;
  /**
   * Let Basic auth run over plain HTTP, where the password crosses the network in clear text: refused
   * without it. For tests that speak raw HTTP to the auth code; the CLI never sets it.
   */
  allowPlainHttpAuth?: boolean;
  /** Answer /metrics without credentials (a Prometheus that cannot send them); with auth it needs them otherwise. */
  metricsOpen?: boolean;
}

/**
 * What a serving process gets from the process that runs it, when it is one of several (`serve --workers N`):
 * not options, because they are functions of that process.
 */
export interface ServerHooks {
  /**
   * The status page's data, computed by another process and handed over; without this hook the server looks
   * at the depot itself when it starts listening and on every reloadTls().
   */
  status?: () => StatusData | undefined;
  /** The /metrics text given this process's own values; default: these values alone. */
  collectMetrics?: (own: MetricsSnapshot) => Promise<string>;
}

export interface DepotServer {
  /** `https://host:port` (or http), the URL an installer is given. */
  url: string;
  port: number;
  /** The listening socket, to hand to other server processes that accept on it too (`child.send(msg, listener)`). */
  listener: NetServer;
  /**
   * Stops accepting, lets running responses finish for up to `graceMs`
   * (default 0: cut them at once), then resolves when every connection is closed.
   */
  close(graceMs?: number): Promise<void>;
  /**
   * Loads the certificate and key again (files are re-read; PEM given here
   * replaces them) for new connections; open connections are not dropped.
   * Also re-reads an htpasswd file (all a plain HTTP server reloads).
   */
  reloadTls(material?: TlsMaterial): Promise<void>;
  /** Opens the access log file again at its path (after logrotate renamed it); nothing without a log file. */
  reopenLog(): Promise<void>;
  /** What the status page shows now: the last look at the depot. */
  status(): Promise<StatusData | undefined>;
  /**
   * Looks at the depot again (catalog, manifest, HCL, each file's size; nothing hashed) for the status page;
   * reloadTls() does it too. A failure keeps the previous look and is thrown.
   */
  refreshStatus(): Promise<StatusData>;
  /** This process's metrics, to be summed with other serving processes'. */
  metricsSnapshot(): MetricsSnapshot;
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

async function realRootOf(root: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(root);
    if (!(await stat(real)).isDirectory()) throw usageError(`${root} is not a folder; serve the folder that contains PROD/.`);
  } catch (err) {
    if (err instanceof Error && err.name === 'DepotkitError') throw err;
    throw describeFsError(err, root);
  }
  return real;
}

/** The open prefixes of these options, normalised and without repeats, PROD/vsan/hcl first with `openHcl`; throws a usage error for a bad one. */
export function openPrefixesOf(opts: Pick<DepotServerOptions, 'openPrefixes' | 'openHcl'>): string[] {
  const given = [...(opts.openHcl ? [DEPOT_PATHS.hclDir] : []), ...(opts.openPrefixes ?? []).map((p) => normaliseOpenPrefix(p, 'The open prefix'))];
  return [...new Set(given)];
}

/** The prefixes as given and, for those that exist, as they resolve now (a prefix may be a symlink inside the root). */
async function resolvedOpenPrefixes(realRoot: string, prefixes: string[]): Promise<string[]> {
  const all = new Set(prefixes);
  for (const prefix of prefixes) {
    const real = await resolveInsideRoot(realRoot, prefix.split('/'));
    if (real === undefined) continue;
    const rel = relative(realRoot, real).split(sep).join('/');
    // A prefix that is a symlink to the root itself would open everything, the catalog included.
    if (rel === '') throw usageError(`The open prefix ${prefix} leads to the web root itself; it would leave the whole depot without auth.`);
    all.add(rel);
  }
  return [...all];
}

export interface PreparedDepotServer {
  /**
   * Starts accepting on the options' host and port, or with `shared` (a
   * listening socket received from another process, which keeps accepting on
   * it too) on that socket; host and port then only name the URL. The shared
   * socket is taken over synchronously: call this in the same tick as the
   * message that brought it, because until then the net.Server that Node wraps
   * a received socket in accepts connections and answers none.
   */
  listen(shared?: NetServer): Promise<DepotServer>;
}

/** Everything of a server that takes time (root, users, certificate, log), without listening yet. */
export async function prepareDepotServer(opts: DepotServerOptions, hooks: ServerHooks = {}): Promise<PreparedDepotServer> {
  // Basic credentials are only base64: over plain HTTP anyone on the path reads the password.
  if (opts.auth && !opts.tls && !opts.allowPlainHttpAuth)
    throw usageError('Basic auth over plain HTTP would send the password in clear text.', 'Serve over TLS (a certificate and key), or without auth.');
  const given = openPrefixesOf(opts);
  const realRoot = await realRootOf(opts.root);
  const openPrefixes = await resolvedOpenPrefixes(realRoot, given);
  const tlsSource = opts.tls;
  const material = tlsSource ? await loadTlsMaterial(tlsSource) : undefined;
  // Last of what may fail: it starts a thread for bcrypt.
  const auth = opts.auth ? await createAuthenticator(opts.auth, opts.authLimits) : undefined;
  const log: AccessLog | undefined = opts.accessLog ? openAccessLog(opts.accessLog) : undefined;
  const secure = material !== undefined;
  // The certificate now served (reloadTls replaces it), which the status page describes.
  let currentCertPem = material?.certPem;
  const metrics = new ServeMetrics();
  // The last look at the depot, when this process looks itself (set once listening: the URL needs the port).
  let ownStatus: Promise<StatusData | undefined> | undefined;
  const pages: PageSources = {
    status: () => (hooks.status ? Promise.resolve(hooks.status()) : (ownStatus ?? Promise.resolve(undefined))),
    metricsText: async () => {
      const own = metrics.snapshot();
      return hooks.collectMetrics ? hooks.collectMetrics(own) : aggregateMetrics([own]);
    },
    metricsOpen: opts.metricsOpen ?? false,
  };
  const handler = createHandler({
    realRoot,
    auth,
    openPrefixes,
    readBuffer: opts.readBuffer,
    sendTimeoutMs: opts.sendTimeoutMs,
    isClosing: () => tracker.isClosing,
    log,
    metrics,
    pages,
  });
  const server: Server = secure ? createHttpsServer(secureOptions(material)) : createHttpServer();
  const tracker = new ConnectionTracker(server, secure);
  server.on('request', tracker.wrap(handler));
  // Counted only: the https server's own listener still ends the connection.
  if (secure) server.on('tlsClientError', (err: NodeJS.ErrnoException) => metrics.tlsFailure(err));
  const host = opts.host ?? '127.0.0.1';
  const statusAuth = opts.auth === undefined ? undefined : 'htpasswdFile' in opts.auth ? { htpasswd: true as const } : { user: opts.auth.user };
  return { listen };

  async function listen(shared: NetServer | undefined): Promise<DepotServer> {
    try {
      // A socket handed over by another process is listening already; a port of our own may be taken.
      if (shared) await new Promise<void>((resolve, reject) => server.once('error', reject).listen(shared, () => resolve()));
      else await listenOn(server, opts.port ?? 0, host);
    } catch (err) {
      await log?.close();
      await auth?.close();
      throw err;
    }
    const port = (server.address() as AddressInfo).port;
    // The depot's root as given (served files resolve inside its realpath), and the URL as the certificate names it.
    const lookAtDepot = async () => {
      const look = await import('./status-data.js');
      const url = look.installerUrl(currentCertPem, host, port, hostname().toLowerCase() || 'localhost');
      return look.statusData(opts.root, { certPem: currentCertPem, url, auth: statusAuth, openPrefixes: given });
    };
    const refreshStatus = async (): Promise<StatusData> => {
      const previous = ownStatus;
      const next = lookAtDepot();
      ownStatus = next.catch(() => previous);
      return next;
    };
    // Synchronously after listening, before any request is handled: the page waits for this first look.
    if (!hooks.status) void refreshStatus().catch(() => {});
    return {
      url: `${material ? 'https' : 'http'}://${urlHost(host)}:${port}`,
      port,
      listener: server,
      async close(graceMs = 0) {
        await tracker.close(graceMs);
        await log?.close();
        await auth?.close();
      },
      async reloadTls(next) {
        try {
          if (tlsSource) {
            const fresh = next ?? (await loadTlsMaterial(tlsSource));
            (server as import('node:https').Server).setSecureContext(secureOptions(fresh));
            currentCertPem = fresh.certPem;
          } else if (next) {
            throw usageError('This server speaks plain HTTP; it cannot take a certificate.');
          }
          await auth?.reload();
        } finally {
          // Whatever became of the certificate, the depot is looked at again (a file deleted or added since).
          if (!hooks.status) await refreshStatus().catch(() => {});
        }
      },
      async reopenLog() {
        await log?.reopen();
      },
      status: () => pages.status(),
      refreshStatus,
      metricsSnapshot: () => metrics.snapshot(),
    };
  }
}

/** Starts the depot's static file server in this process. */
export async function startDepotServer(opts: DepotServerOptions, hooks?: ServerHooks): Promise<DepotServer> {
  return (await prepareDepotServer(opts, hooks)).listen();
}
