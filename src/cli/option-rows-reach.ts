import { CHECK_DEFAULTS } from '../check/defaults.js';
import { CONSUMER_ROLES, EXPORT_DEFAULT_NAME, INSTALLER_DEFAULT_USER, MGMT_DEFAULT_USER, SDDC_MANAGER_DEFAULT_USER } from '../constants.js';
import { VCENTER_DEPOT_DEFAULTS } from '../vcenter/depot-defaults.js';
import { INSTALLER_DEFAULTS } from '../installer/defaults.js';
import { SERVE_OPTIONS } from '../server/command-line.js';
import { MIRROR_DEFAULTS } from '../transfer/defaults.js';
import { REPLACE_DEFAULTS } from '../vcenter/choices.js';
import { serveRow, type OptionRow } from './option-rows.js';
import { InvalidOption } from './output.js';

/**
 * A user and password in a proxy URL given on the command line, which `ps` and the shell's history
 * would show: a user, a colon, then anything up to an `@` (a password may hold `/` unencoded).
 */
function proxyUrl(value: string): string {
  if (/^[^/@]*:.*@/s.test(value.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')))
    throw new InvalidOption(
      '--proxy holds a password, which the command line shows to anyone running ps: give the user with --proxy-user and the password with --proxy-password-file, or user:password in --proxy-credentials-file.',
    );
  return value;
}

const TRUST = ': a CA certificate file or a CA folder (repeatable)';
const MIRRORED = 'idle time allowed for an answer or between its bytes; also the span --min-speed is judged over';
const PASSWORD_ENV = (whose: string) => `an environment variable that holds ${whose} password (without either: asked on a terminal)`;

/** The options more than one command takes to reach other systems: whom to trust, as whom to log in, which consumers, how long to wait, which proxy. */
export const REACH_ROWS: Readonly<Record<string, OptionRow>> = {
  // ------------------------------------------------------------ trust: CAs read by the one resolver, cert/trust-source.ts
  ca: {
    argument: '<file-or-dir>',
    description: `a CA the installer trusts${TRUST}`,
    repeatable: true,
    for: {
      'depot mirror': `a CA to trust, or a folder of certificates; Node's public roots without it${TRUST}`,
      'esx mirror': `a CA to trust, or a folder of certificates; Node's public roots without it${TRUST}`,
      'esx check': `a CA the vCenter trusts (its trusted root chains); trust comes only from these${TRUST}`,
      check: `a CA the installer trusts; trust comes only from these, as in the installer's store${TRUST}`,
      'installer trust': { description: `the CA certificate(s) to trust (or remove)${TRUST}`, required: true },
      'installer status': `the depot's CA (by default: the top of the chain the configured depot sends)${TRUST}`,
      'vcenter trust': `the CA to trust (its issuers may follow it in the file)${TRUST}`,
    },
  },
  'server-ca': {
    argument: '<file-or-dir>',
    description: `a CA to trust the server's current certificate with${TRUST}`,
    repeatable: true,
    conflicts: ['insecure'],
    for: { 'vcenter trust': `a CA to trust the server's certificate with${TRUST}`, 'vcenter depot': `a CA to trust the vCenter's certificate with${TRUST}` },
  },
  'installer-ca': {
    argument: '<file-or-dir>',
    description: "the installer's certificate or its CA, to verify its HTTPS: a certificate file or a CA folder",
    conflicts: ['insecure'],
    for: { 'depot move-ca': "the consumers' certificate or CA, to verify their HTTPS" },
  },
  insecure: {
    description: "do not verify the installer's certificate (a warning says so)",
    for: {
      'depot move-ca': "do not verify the consumers' certificates",
      'vcenter replace-cert': "do not validate the server's current certificate (the new one is always checked)",
      'vcenter trust': "do not validate the server's certificate",
      'vcenter depot': "do not validate the vCenter's certificate",
    },
  },
  // ------------------------------------------------------------ users and passwords (never a --password: ps and the shell's history show it)
  user: {
    argument: '<name>',
    description: `installer user (with --installer; default: ${INSTALLER_DEFAULT_USER}, or ${SDDC_MANAGER_DEFAULT_USER} with --role sddc-manager)`,
    for: {
      'depot mirror': 'the depot user',
      check: "the depot user (the installer's offlineAccount)",
      serve: { description: SERVE_OPTIONS.user.description, conflicts: ['htpasswd'] },
      export: { description: 'Basic auth user; its password is written hashed, as the server reads it', conflicts: ['htpasswd'] },
      'vcenter replace-cert': { description: 'a single-sign-on user allowed to manage certificates', default: MGMT_DEFAULT_USER },
      'vcenter trust': { description: 'a single-sign-on user allowed to manage certificates', default: MGMT_DEFAULT_USER },
      'vcenter depot': { description: 'a single-sign-on user allowed to change vLCM settings', default: MGMT_DEFAULT_USER },
      'sim installer': `the user that may log in (default: ${INSTALLER_DEFAULT_USER}, or ${SDDC_MANAGER_DEFAULT_USER} as an SDDC Manager)`,
      'sim vcenter': { description: 'the user that may log in', default: MGMT_DEFAULT_USER },
    },
  },
  'password-file': {
    argument: '<file>',
    description: "a file whose first line is the user's password",
    conflicts: ['password-env'],
    for: {
      'depot mirror': "a file whose first line is the depot user's password",
      check: "a file whose first line is the depot user's password",
      serve: "a file whose first line is the --user's password",
      export: "a file whose first line is the --user's password",
      'sim installer': "a file whose first line is that user's password",
      'sim vcenter': "a file whose first line is that user's password",
      'depot move-ca': "a file whose first line is the consumers' user's password",
    },
  },
  'password-env': {
    argument: '<name>',
    description: PASSWORD_ENV("the user's"),
    for: {
      'depot mirror': PASSWORD_ENV("the depot user's"),
      check: PASSWORD_ENV("the depot user's"),
      serve: PASSWORD_ENV("the --user's"),
      export: PASSWORD_ENV("the --user's"),
      'depot move-ca': PASSWORD_ENV("the consumers' user's"),
      'sim installer': "an environment variable that holds that user's password (without either: the lab password in the README, never asked for)",
      'sim vcenter': PASSWORD_ENV("that user's"),
    },
  },
  'depot-user': { argument: '<name>', description: 'depot Basic auth user (none: the depot is open)' },
  'depot-password-file': { argument: '<file>', description: "a file whose first line is the depot user's password", conflicts: ['depot-password-env'] },
  'depot-password-env': { argument: '<name>', description: PASSWORD_ENV("the depot user's") },
  'allow-http-credentials': {
    description: 'send the password over plain HTTP (http:// URLs)',
    for: {
      check: 'send the password over plain HTTP (http:// URLs); without it the check withholds it there, as it does from a server that fails the TLS checks',
    },
  },
  htpasswd: serveRow('htpasswd', {
    conflicts: ['password-file', 'password-env'],
    for: { export: 'Basic auth users from an htpasswd file, read where it is (Caddy: copied in its syntax; bcrypt only)' },
  }),
  // ------------------------------------------------------------ the installers and other consumers
  installer: { argument: '<url>', description: 'one installer, https://host[:port]' },
  inventory: {
    argument: '<file>',
    description: 'a fleet: YAML or JSON list of installers and where their passwords are',
    for: { 'depot move-ca': { description: 'the consumers (installers and SDDC Managers): YAML or JSON, as installer commands read it', required: true } },
  },
  role: {
    argument: '<role>',
    description: "with --installer: the role it must answer (an inventory gives each entry's role); another role fails its row",
    choices: Object.keys(CONSUMER_ROLES),
    conflicts: ['inventory'],
    for: {
      'sim installer': { description: 'the consumer it plays; appliance-info answers VcfInstaller or SddcManager', default: 'installer', conflicts: undefined },
    },
  },
  'depot-url': {
    argument: '<url>',
    description: 'the depot as the consumers reach it, https://host[:port] (with --as-host: as this host reaches it)',
    required: true,
    for: { 'installer connect-depot': { description: 'the depot, https://host[:port][/prefix] (http:// and prefixes need 9.1)', required: undefined } },
  },
  'as-host': {
    argument: '<name>',
    description: "the host name the consumers use, when it differs from --depot-url's (the depot's address from here)",
    for: {
      'esx check': "the host name the vCenter will use, when it differs from the URL's",
      check: "the host name the installer will use, when it differs from the URL's",
    },
  },
  name: {
    argument: '<host>',
    description: 'another name or address the consumers use for the depot, which the certificate must name (repeatable)',
    repeatable: true,
    for: {
      export: { argument: '<name>', description: 'base name of the files, the systemd unit and its user', default: EXPORT_DEFAULT_NAME, repeatable: undefined },
    },
  },
  remove: {
    description: "remove these certificates from the consumer's trust, by SHA-256, whatever alias they are listed under",
    for: { 'vcenter trust': 'remove every trusted root chain that holds the CA' },
  },
  // ------------------------------------------------------------ time and load
  timeout: {
    argument: '<seconds>',
    description: 'timeout of each API request',
    default: INSTALLER_DEFAULTS.timeoutMs / 1000,
    number: { min: 1, unit: 'second' },
    for: {
      'depot mirror': { description: MIRRORED, default: MIRROR_DEFAULTS.timeoutMs / 1000 },
      'esx mirror': { description: MIRRORED, default: MIRROR_DEFAULTS.timeoutMs / 1000 },
      'esx check': { description: 'connect and handshake timeout', default: CHECK_DEFAULTS.timeoutMs / 1000 },
      check: { description: 'connect and handshake timeout', default: CHECK_DEFAULTS.timeoutMs / 1000 },
    },
  },
  concurrency: {
    argument: '<n>',
    description: 'installers worked on at once, with --inventory',
    default: INSTALLER_DEFAULTS.concurrency,
    number: { min: 1 },
    for: {
      'esx check': { description: 'requests in flight at once', default: CHECK_DEFAULTS.concurrency },
      check: { description: 'requests in flight at once', default: CHECK_DEFAULTS.concurrency },
      'depot mirror': { description: 'binaries downloaded at once', default: MIRROR_DEFAULTS.concurrency },
      'esx mirror': { description: 'VIBs downloaded at once', default: MIRROR_DEFAULTS.concurrency },
      'depot move-ca': 'consumers worked on at once',
    },
  },
  'min-speed': {
    argument: '<bytes-per-second>',
    description: 'slowest average speed over --timeout before a download is given up (as curl --speed-limit)',
    default: MIRROR_DEFAULTS.minBytesPerSecond,
    number: { min: 1 },
  },
  'wait-timeout': {
    argument: '<seconds>',
    description: 'how long to wait for the depot status',
    default: INSTALLER_DEFAULTS.depotWaitMs / 1000,
    number: { min: 1, unit: 'second' },
    for: {
      'installer download': { description: 'how long to wait for every download', default: INSTALLER_DEFAULTS.downloadTimeoutMs / 1000 },
      'vcenter replace-cert': { description: 'how long to wait for the restarted server', default: REPLACE_DEFAULTS.waitTimeoutMs / 1000 },
    },
  },
  'sync-timeout': {
    argument: '<seconds>',
    description: 'how long to wait for the sync',
    default: INSTALLER_DEFAULTS.syncTimeoutMs / 1000,
    number: { min: 1, unit: 'second' },
    for: { 'vcenter depot': { description: 'how long to wait for the sync task', default: VCENTER_DEPOT_DEFAULTS.syncTimeoutMs / 1000 } },
  },
  // ------------------------------------------------------------ the HTTP(S) proxy on the way out, named as curl takes it
  proxy: {
    argument: '<url>',
    description:
      'an HTTP(S) proxy to go through (http://host:port; "" for none); without it, https_proxy or HTTPS_PROXY (http_proxy or HTTP_PROXY for an http:// URL)',
    parse: proxyUrl,
  },
  'proxy-user': { argument: '<name>', description: "the proxy's Basic user" },
  'proxy-password-file': { argument: '<file>', description: "a file whose first line is the proxy user's password", conflicts: ['proxy-password-env'] },
  'proxy-password-env': { argument: '<name>', description: PASSWORD_ENV("the proxy user's") },
  'proxy-credentials-file': {
    argument: '<file>',
    description: "a file whose first line is the proxy's user:password",
    conflicts: ['proxy-user', 'proxy-password-file', 'proxy-password-env'],
  },
  noproxy: {
    argument: '<hosts>',
    description:
      'hosts reached without the proxy, as NO_PROXY lists them (names and their subdomains, addresses, blocks, :port; * for all); instead of no_proxy or NO_PROXY',
  },
};
