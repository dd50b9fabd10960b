import { createServer, type Server } from 'node:https';
import { isIP, type AddressInfo } from 'node:net';
import { CONSUMER_ROLES, INSTALLER_DEFAULT_USER, INSTALLER_JWT, SDDC_MANAGER_DEFAULT_USER, type ConsumerRole } from '../../constants.js';
import { INSTALLER_SIM_DEFAULT_VERSION } from './literals.js';
import { selfSignedServerCertificate } from '../../cert/index.js';
import { usageError } from '../../util/errors.js';
import { listenOn } from '../../util/listen.js';
import { installerApp } from './app.js';
import type { InstallerSimContext } from './context.js';
import { DepotTlsClient } from './depot-tls.js';
import { BundleDownloads } from './downloads.js';
import { DepotLifecycle } from './lifecycle.js';
import { ServiceLog } from './log.js';
import { StateWriter, loadState, type SimState } from './state.js';
import { TokenService } from './tokens.js';
import { TrustStore } from './trust-store.js';
import { bareHost, urlHost } from '../../util/url.js';

export interface InstallerSimulatorOptions {
  /** Address to listen on; 127.0.0.1 by default. */
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /**
   * User name to password; by default the administrator with the lab password `VMware1!VMware1!`:
   * the installer's local admin@local, SDDC Manager's SSO administrator@vsphere.local.
   */
  users?: Record<string, string>;
  /** Keep the state (trusted certificates, depot settings, token secret, refresh tokens) in this file, written atomically. */
  stateFile?: string;
  /** The HTTPS certificate and key; by default a fresh self-signed certificate for `hostname`. */
  tls?: { certPem: string; keyPem: string };
  /** The version appliance-info reports; 9.1 and later accept the depot `url` field. */
  version?: string;
  /**
   * The consumer it plays: `installer` (the default) or `sddc-manager`; the role appliance-info
   * answers (VcfInstaller, SddcManager) is taken as well. Both serve the same depot API.
   */
  role?: ConsumerRole | (typeof CONSUMER_ROLES)[ConsumerRole];
  /** Name in the self-signed certificate (with `host`); `host` by default. */
  hostname?: string;
  /** Scopes per user; every user gets the full list by default. */
  scopes?: Record<string, string[]>;
  /** Milliseconds since the epoch; tests move it to expire tokens. */
  clock?: () => number;
  /** Timeout of each step of the depot validation; 15 s by default. */
  depotTimeoutMs?: number;
  /**
   * Host names the simulator resolves to these addresses when it connects to a
   * depot, instead of DNS or a hosts file (curl's --resolve): a rehearsal can
   * use an invented FQDN for the depot.
   */
  resolve?: Record<string, string>;
  /** Keep downloaded bundles' files here, laid out like the depot; by default only their verdict is kept. */
  store?: string;
  /** Called with each log line as it is written. */
  onLog?: (line: string) => void;
}

export interface InstallerSimulator {
  /** `https://<host>:<port>` */
  url: string;
  port: number;
  /** The simulator's self-signed certificate: what a client trusts it with (`--installer-ca`). */
  caPem: string;
  /** The service log so far (passwords masked), oldest first. */
  logs: string[];
  close(): Promise<void>;
}

/** The lab password the README documents, for a simulator started without a password file. */
export const INSTALLER_LAB_PASSWORD = 'VMware1!VMware1!';

/** The role appliance-info answers for the consumer `role` names; refuses another. */
function applianceRoleOf(role: string | undefined): (typeof CONSUMER_ROLES)[ConsumerRole] {
  if (role === undefined) return CONSUMER_ROLES.installer;
  if (Object.hasOwn(CONSUMER_ROLES, role)) return CONSUMER_ROLES[role as ConsumerRole];
  const applianceRoles: string[] = Object.values(CONSUMER_ROLES);
  if (applianceRoles.includes(role)) return role as (typeof CONSUMER_ROLES)[ConsumerRole];
  throw usageError(`The simulator plays ${Object.keys(CONSUMER_ROLES).join(' or ')}, not "${role}".`);
}

/** The administrator a consumer has out of the box, with the lab password. */
function defaultUsers(applianceRole: string): Record<string, string> {
  const user = applianceRole === CONSUMER_ROLES['sddc-manager'] ? SDDC_MANAGER_DEFAULT_USER : INSTALLER_DEFAULT_USER;
  return { [user]: INSTALLER_LAB_PASSWORD };
}

/** Host names (compared without case) to addresses; refuses what is not an address. */
function resolveMap(entries: Record<string, string>): Map<string, string> {
  const map = new Map<string, string>();
  for (const [name, address] of Object.entries(entries)) {
    const bare = bareHost(address);
    if (isIP(bare) === 0) throw usageError(`"${address}" is not an IP address (resolving ${name}).`);
    map.set(name.toLowerCase().replace(/\.$/, ''), bare);
  }
  return map;
}

/** Starts a simulated installer on real HTTPS; see InstallerSimulatorOptions. */
export async function startInstallerSimulator(opts: InstallerSimulatorOptions = {}): Promise<InstallerSimulator> {
  const host = opts.host ?? '127.0.0.1';
  const clock = opts.clock ?? Date.now;
  const role = applianceRoleOf(opts.role);
  const users = opts.users ?? defaultUsers(role);
  if (Object.keys(users).length === 0) throw usageError('The installer simulator needs at least one user.');
  const tls = opts.tls ?? (await selfSignedServerCertificate(opts.hostname ?? host, host, 729));
  const loaded: SimState | undefined = opts.stateFile ? await loadState(opts.stateFile) : undefined;

  const log = new ServiceLog(clock, opts.onLog);
  for (const password of Object.values(users)) log.addSecret(password);
  const refreshTokens = new Map(Object.entries(loaded?.refreshTokens ?? {}));
  const tokens = new TokenService(loaded?.secret ?? TokenService.newSecret(), refreshTokens, clock, (user) => opts.scopes?.[user] ?? INSTALLER_JWT.scopes);
  const trust = new TrustStore(loaded?.trustedCertificates ?? []);
  const depot: InstallerSimContext['depot'] = { current: loaded?.depot };
  const writer = new StateWriter(opts.stateFile);
  const snapshot = (): SimState => ({
    secret: tokens.secretHex,
    trustedCertificates: trust.list(),
    depot: depot.current,
    refreshTokens: Object.fromEntries(refreshTokens),
  });
  // A new state file starts whole, so that a restart right away finds the same secret.
  if (opts.stateFile && !loaded) await writer.save(snapshot);

  const lifecycle = new DepotLifecycle(new BundleDownloads(log, clock, opts.store), log, clock);
  const app = installerApp({
    lifecycle,
    users,
    tokens,
    trust,
    depot,
    role,
    version: opts.version ?? INSTALLER_SIM_DEFAULT_VERSION,
    log,
    depotTimeoutMs: opts.depotTimeoutMs ?? 15_000,
    depotTls: new DepotTlsClient(),
    resolve: resolveMap(opts.resolve ?? {}),
    changed: () => writer.save(snapshot),
  });

  const server: Server = createServer({ key: tls.keyPem, cert: tls.certPem, minVersion: 'TLSv1.2' }, app);
  await listenOn(server, opts.port ?? 0, host);
  const port = (server.address() as AddressInfo).port;
  log.write('INFO', 'startup', `${role} API listening on ${host}:${port} (version ${opts.version ?? INSTALLER_SIM_DEFAULT_VERSION})`);

  return {
    url: `https://${urlHost(host)}:${port}`,
    port,
    caPem: tls.certPem,
    logs: log.lines,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await lifecycle.close();
      await writer.flush();
    },
  };
}
