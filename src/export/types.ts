import type { ExportTarget } from '../constants.js';
import type { AuthSource, UsersPlan } from './users.js';

export interface ExportOptions {
  target: ExportTarget;
  /** The web root: the folder that contains PROD/. */
  root: string;
  /** Where the files are written; the configurations name the files written there by their absolute paths. */
  out: string;
  /** Base name of the files, the systemd unit and its user (default depotkit). */
  name?: string;
  /** Address to listen on; every address when absent. */
  host?: string;
  /** Default 443. */
  port?: number;
  /** The depot's FQDN, as the installer is given it; default: the certificate's first DNS name. */
  serverName?: string;
  /** The certificate (best the chain: leaf then CA) and its key, read where they are. */
  cert?: string;
  key?: string;
  /** systemd only: let depotkit serve issue its certificate from this CA folder, with these names. */
  ca?: string;
  dns?: string[];
  ip?: string[];
  auth?: AuthSource;
  openPrefixes?: string[];
  openHcl?: boolean;
  /** Group that must read the users file (the server's workers' or the service's); default per server. */
  group?: string;
  /**
   * nginx, Apache, Caddy: write the status page `depotkit serve` shows at / as a static copy
   * (`<out>/status/index.html`, and the CA certificate it links to as `/ca.pem`), served at / behind
   * the same auth. A copy: export again to refresh it.
   */
  statusPage?: boolean;
  /** Caddy's version (e.g. 2.6.2); asked of the installed `caddy` when absent. */
  caddyVersion?: string;
  /** Access log file ('-' for systemd: the journal). */
  accessLog?: string;
  /** systemd: serve's access log format, serving processes and grace period. */
  logFormat?: 'combined' | 'json';
  workers?: number;
  grace?: number;
  /** systemd: the command that runs depotkit; default the program running now (this executable, or node and the CLI script). */
  exec?: string[];
  /** systemd: the dedicated user the service runs as (default: the name); the group is its own unless `group`. */
  serviceUser?: string;
  force?: boolean;
}

export type ExportedRole = 'site' | 'caddyfile' | 'users' | 'unit' | 'logrotate' | 'sysusers' | 'status-page' | 'ca';

export interface ExportedFile {
  path: string;
  role: ExportedRole;
  mode: number;
  /** The group given the file (the server's), when this process could set it. */
  group?: string;
}

export interface ExportReport {
  target: ExportTarget;
  root: string;
  /** What the installer is given. */
  url: string;
  files: ExportedFile[];
  /** Files the configuration reads where they are. */
  reads: { cert?: string; key?: string; ca?: string; htpasswd?: string };
  open: string[];
  /** Caddy: the version written for and the Basic auth directive used. */
  caddy?: { version?: string; directive: string };
  /** What to do next, in order: copy, permissions, test, reload, check. */
  nextSteps: string[];
  /** The depotkit check command that must accept the depot through this server. */
  check: string;
  warnings: string[];
}

/** A file the export will write. */
export interface PlannedFile {
  path: string;
  role: ExportedRole;
  text: string;
  /** 0640 for the users file: its group is the server's. */
  mode: number;
}

export const SECRET_MODE = 0o640;
export const PUBLIC_MODE = 0o644;

/** The options checked and resolved, as every server's plan reads them. */
export interface ExportContext {
  name: string;
  root: string;
  out: string;
  port: number;
  host?: string;
  serverName: string;
  /** `:port` in the URL, or nothing for 443. */
  urlPort: string;
  cert?: string;
  key?: string;
  users?: UsersPlan;
  open: string[];
  group: string;
  serviceUser: string;
  accessLog?: string;
  warnings: string[];
  /** Folders made for the files (0750) whose group could not be set to the server's here. */
  ungroupedFolders?: string[];
}

/** What one server's export writes and says. */
export interface Plan {
  files: PlannedFile[];
  reads: ExportReport['reads'];
  caddy?: ExportReport['caddy'];
  /** The steps, given the secret files whose group could not be set here. */
  nextSteps(unowned: string[]): string[];
}
