import { realpath, stat } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { DEPOT_PATHS } from '../constants.js';
import { describeFsError, usageError } from '../util/errors.js';
import { openAccessLog, type AccessLog, type AccessLogOptions } from './access-log.js';
import { createAuthenticator, type AuthLimits, type AuthOptions } from './auth.js';
import { ConnectionTracker } from './connections.js';
import { createHandler } from './handler.js';
import { normaliseOpenPrefix, resolveInsideRoot } from './paths.js';
import { loadTlsMaterial, secureOptions, type TlsMaterial, type TlsSource } from './tls.js';

export { parseBasicAuth, WWW_AUTHENTICATE, type AuthLimits, type AuthOptions, type AuthVerdict, type Authenticator } from './auth.js';
export { parseHtpasswd, readHtpasswd, hashKind, type HtpasswdEntry, type HashKind } from './htpasswd.js';
export { formatCombined, formatJson, type AccessLogFormat, type AccessLogOptions, type AccessRecord } from './access-log.js';
export { normaliseOpenPrefix, parseRequestPath } from './paths.js';
export { parseRange, type ByteRange } from './range.js';
export type { TlsSource, TlsMaterial } from './tls.js';

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
export async function prepareDepotServer(opts: DepotServerOptions): Promise<PreparedDepotServer> {
  const given = openPrefixesOf(opts);
  const realRoot = await realRootOf(opts.root);
  const openPrefixes = await resolvedOpenPrefixes(realRoot, given);
  const tlsSource = opts.tls;
  const material = tlsSource ? await loadTlsMaterial(tlsSource) : undefined;
  // Last of what may fail: it starts a thread for bcrypt.
  const auth = opts.auth ? await createAuthenticator(opts.auth, opts.authLimits) : undefined;
  const log: AccessLog | undefined = opts.accessLog ? openAccessLog(opts.accessLog) : undefined;
  const secure = material !== undefined;
  const handler = createHandler({ realRoot, auth, openPrefixes, readBuffer: opts.readBuffer, sendTimeoutMs: opts.sendTimeoutMs, isClosing: () => tracker.isClosing, log });
  const server: Server = secure ? createHttpsServer(secureOptions(material)) : createHttpServer();
  const tracker = new ConnectionTracker(server, secure);
  server.on('request', tracker.wrap(handler));
  const host = opts.host ?? '127.0.0.1';
  return { listen };

  async function listen(shared: NetServer | undefined): Promise<DepotServer> {
    const listening = new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'EADDRINUSE') reject(usageError(`Port ${opts.port} on ${host} is already in use.`));
        else if (err.code === 'EACCES') reject(usageError(`Not allowed to listen on port ${opts.port}; ports below 1024 need privileges.`, 'Use --port 8443, or run with the capability to bind low ports.'));
        else if (err.code === 'EADDRNOTAVAIL') reject(usageError(`${host} is not an address of this machine.`));
        else reject(err);
      });
      if (shared) server.listen(shared, () => resolve());
      else server.listen(opts.port ?? 0, host, () => resolve());
    });
    try {
      await listening;
    } catch (err) {
      await log?.close();
      await auth?.close();
      throw err;
    }
    const port = (server.address() as AddressInfo).port;
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
        if (tlsSource) {
          const fresh = next ?? (await loadTlsMaterial(tlsSource));
          (server as import('node:https').Server).setSecureContext(secureOptions(fresh));
        } else if (next) {
          throw usageError('This server speaks plain HTTP; it cannot take a certificate.');
        }
        await auth?.reload();
      },
      async reopenLog() {
        await log?.reopen();
      },
    };
  }
}

/** Starts the depot's static file server in this process. */
export async function startDepotServer(opts: DepotServerOptions): Promise<DepotServer> {
  return (await prepareDepotServer(opts)).listen();
}
