import { DEPOT_PATHS, UMDS_PATCH_STORE_DIR } from '../constants.js';
import type { AccessLogFormat } from './access-log.js';
import { SERVE_DEFAULT_GRACE_SECONDS, SERVE_DEFAULT_PORT, SERVE_DEFAULT_SEND_TIMEOUT_SECONDS } from './tuning.js';

/**
 * `depotkit serve`'s options as data: the one place their flags are spelt. `serve` and `export` declare
 * their options from here (export with its own descriptions and defaults), and the systemd export writes
 * the unit's command line from here, so that the unit runs serve with the options serve has.
 */

export interface ServeOptionSpec {
  readonly flag: string;
  /** The value's placeholder; none for a switch. */
  readonly argument?: string;
  /** serve's own words in its help. */
  readonly description: string;
  readonly default?: string | number;
  /** A whole number from `min` (to `max`), in `unit`s when it has one. */
  readonly min?: number;
  readonly max?: number;
  readonly unit?: 'second';
  /** Given again for each value; the values collect into a list. */
  readonly repeatable?: boolean;
  readonly choices?: readonly string[];
}

const LOG_FORMATS = ['combined', 'json'] as const satisfies readonly AccessLogFormat[];

export const SERVE_OPTIONS = {
  host: { flag: '--host', argument: '<addr>', description: 'address to listen on', default: '0.0.0.0' },
  port: {
    flag: '--port',
    argument: '<n>',
    description: 'port to listen on (give the installer this port: it takes any)',
    default: SERVE_DEFAULT_PORT,
    min: 0,
    max: 65535,
  },
  cert: { flag: '--cert', argument: '<file>', description: 'server certificate PEM, best the chain (leaf then CA); re-read on SIGHUP' },
  key: { flag: '--key', argument: '<file>', description: 'its private key PEM; re-read on SIGHUP' },
  ca: {
    flag: '--ca',
    argument: '<dir>',
    description: 'issue a server certificate from this CA folder (ca-key.pem, ca-cert.pem) at start and on SIGHUP',
  },
  dns: {
    flag: '--dns',
    argument: '<name>',
    description: 'a DNS name of the certificate issued with --ca (repeatable; default: host name and localhost)',
    repeatable: true,
  },
  ip: {
    flag: '--ip',
    argument: '<addr>',
    description: "an IP address of the certificate issued with --ca (repeatable; default: this machine's addresses, also with --dns)",
    repeatable: true,
  },
  user: { flag: '--user', argument: '<name>', description: 'Basic auth user (its password from --password-file, --password-env or a prompt)' },
  htpasswd: { flag: '--htpasswd', argument: '<file>', description: 'Basic auth users from an htpasswd file (bcrypt or $apr1$); re-read on SIGHUP' },
  http: { flag: '--http', description: "plain HTTP, no TLS (the installer's API accepts it from 9.1; never with auth)" },
  open: {
    flag: '--open',
    argument: '<prefix>',
    description: `leave a path prefix under the root without auth, by whole segments (repeatable), e.g. ${UMDS_PATCH_STORE_DIR} for the update tool, which cannot send credentials`,
    repeatable: true,
  },
  openHcl: {
    flag: '--open-hcl',
    description: `leave ${DEPOT_PATHS.hclDir} without auth, as the vendor's web-server recipe does (same as --open ${DEPOT_PATHS.hclDir})`,
  },
  metricsOpen: {
    flag: '--metrics-open',
    description: 'answer /metrics without credentials, for a Prometheus that sends none (the status page at / and the depot still need them)',
  },
  workers: { flag: '--workers', argument: '<n>', description: 'server processes (default: one per core beyond the first, at least 1)', min: 1 },
  accessLog: {
    flag: '--access-log',
    argument: '<file>',
    description: "access log file (a regular file, not a symbolic link), or '-' for stdout (never holds credentials)",
  },
  logFormat: { flag: '--log-format', argument: '<format>', description: 'access log format', choices: LOG_FORMATS, default: 'combined' },
  grace: {
    flag: '--grace',
    argument: '<seconds>',
    description: 'on SIGTERM/SIGINT, how long running downloads may finish',
    default: SERVE_DEFAULT_GRACE_SECONDS,
    min: 0,
    unit: 'second',
  },
  sendTimeout: {
    flag: '--send-timeout',
    argument: '<seconds>',
    description: "cut a download that makes no progress for this long (a client that stopped reading), as nginx's send_timeout",
    default: SERVE_DEFAULT_SEND_TIMEOUT_SECONDS,
    min: 1,
    unit: 'second',
  },
} as const satisfies Record<string, ServeOptionSpec>;

export type ServeOptionName = keyof typeof SERVE_OPTIONS;

/** A value for serve's command line: a list gives the option once per item, `true` gives it alone, undefined or false leaves it out. */
export type ServeArgument = string | number | boolean | readonly string[] | undefined;

/** serve's command line after the program: `serve <root>` and the options given, in the order given. */
export function serveCommandLine(root: string, given: ReadonlyArray<readonly [ServeOptionName, ServeArgument]>): string[] {
  const words = ['serve', root];
  for (const [name, value] of given) {
    const { flag } = SERVE_OPTIONS[name];
    if (value === undefined || value === false) continue;
    if (value === true) words.push(flag);
    else if (typeof value === 'object') for (const item of value) words.push(flag, item);
    else words.push(flag, String(value));
  }
  return words;
}
