import type { Server as NetServer } from 'node:net';
import type { AccessLogOptions } from './access-log.js';
import type { AuthLimits, AuthOptions } from './auth.js';
import type { FileReadPolicy } from './file-reads.js';
import type { MetricsSnapshot } from './metrics.js';
import type { StatusData } from './status-data.js';
import type { TlsMaterial, TlsSource } from './tls.js';

export interface DepotServerOptions {
  /** The web root: the folder that contains PROD/. */
  root: string;
  /** Address to listen on; default 127.0.0.1. */
  host?: string;
  /** Port; default 0 (any free port). */
  port?: number;
  /** Certificate and key; without them the server speaks plain HTTP. */
  tls?: TlsSource;
  /**
   * The file the key was read from, when `tls` holds its text (serve --key): the status page says so at the top
   * while the file can be read by its group or others. A `tls` of files names its key file itself.
   */
  keyFile?: string;
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
   * Files are read in the event loop; a read there that takes `loopBoundMs` or longer while the process sleeps (the
   * disk) is slow, and two close together send the process's reads to libuv's pool for `poolMs` (file-reads.ts).
   * Default SERVE_LOOP_READ_BOUND_MS (2) and SERVE_POOL_READ_MS (1000); a bound of 0 makes every read in the loop slow.
   */
  fileReads?: FileReadPolicy;
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
