import { CHECK_ANONYMOUS_PATHS, DEFAULT_DEMO_BINARY_SIZE, EXPORT_DEFAULT_NAME, EXPORT_TARGETS, INSTALLER_PRODUCT_SKUS } from '../constants.js';
import { PACK_DEFAULT_VOLUME_PRESET, PACK_MANIFEST_SIG_FILE, PACK_VOLUME_PRESETS } from '../constants.js';
import { INSTALLER_DEFAULTS } from '../installer/defaults.js';
import { PLACE_MODES } from '../depot/place.js';
import { SERVE_OPTIONS } from '../server/command-line.js';
import { MGMT_SIM_RESTART_MS } from '../simulators/vcenter/literals.js';
import { InvalidOption, parseByteSize } from './output.js';
import type { OptionRow } from './option-rows.js';

/** A byte size (512M, 4G) or a named one (fat32). */
function parseVolumeSize(value: string): number {
  const preset = PACK_VOLUME_PRESETS[value.toLowerCase()];
  return preset ?? parseByteSize(value);
}

/**
 * `--resolve NAME=ADDRESS`, or curl's `NAME:PORT:ADDRESS` (the port is not
 * kept: the name resolves to the address on every port), collected.
 */
function collectResolve(value: string, previous: Record<string, string>): Record<string, string> {
  const curl = /^([^:=\s]+):\d{1,5}:(.+)$/.exec(value);
  const pair = curl ?? /^([^:=\s]+)=(.+)$/.exec(value);
  if (!pair) throw new InvalidOption(`--resolve ${value}: expected NAME=ADDRESS (or curl's NAME:PORT:ADDRESS).`);
  return { ...previous, [pair[1]!]: pair[2]! };
}

/** The options one command takes (that command is named in TAKES, option-table.ts). */
export const ONE_COMMAND_ROWS: Readonly<Record<string, OptionRow>> = {
  // depot demo
  releases: {
    argument: '<versions>',
    description:
      'several releases instead, comma-separated: GAs and their patches, e.g. 9.0.0.0,9.0.1.0,9.1.0.0 (a patch brings new VCENTER and NSX_T_MANAGER builds)',
    parse: (value: string, previous: string[] = []) => [...previous, ...value.split(',').filter((v) => v.trim() !== '')],
    conflicts: ['release'],
  },
  'binary-size': {
    argument: '<bytes>',
    description: 'size of every synthetic binary (e.g. 1048576, 512M, 2G)',
    default: DEFAULT_DEMO_BINARY_SIZE,
    parse: parseByteSize,
  },
  'signing-dir': { argument: '<dir>', description: 'where the catalog signing key is kept (default: <dir>-signing)' },
  esx: { description: 'also a small ESX depot for vSphere Lifecycle Manager in <dir>/umds-patch-store/ (served without credentials)' },
  // depot build
  metadata: { argument: '<zip-or-dir>', description: "the vendor's metadata zip, or the folder it was extracted to", required: true },
  binaries: { argument: '<dir>', description: 'a folder searched recursively for binaries (repeatable)', repeatable: true, required: true },
  mode: { argument: '<mode>', description: 'how binaries are placed', default: 'copy', choices: PLACE_MODES },
  checksum: { description: 'also hash binaries placed as links (copies are always hashed)' },
  // depot pack, unpack, prune
  'volume-size': {
    argument: '<size>',
    description: `largest volume: bytes, 700M, 4G... or ${Object.keys(PACK_VOLUME_PRESETS).join(', ')} (4 GiB - 512: FAT32 files hold at most 4 GiB - 1)`,
    parse: parseVolumeSize,
    default: PACK_VOLUME_PRESETS[PACK_DEFAULT_VOLUME_PRESET],
    defaultShown: PACK_DEFAULT_VOLUME_PRESET,
  },
  since: {
    argument: '<old>',
    description:
      "a depot folder, a folder of ESX depots or an earlier pack's manifest: pack only what it lacks or has different (a new release's delta; with --esx-only, the month's ESX patch)",
  },
  'signing-key': {
    argument: '<pem>',
    description: `an ECDSA P-256 private key (e.g. depot demo's signing-key.pem) that signs the manifest, into ${PACK_MANIFEST_SIG_FILE}`,
  },
  'no-esx': { description: 'leave out the ESX depots beside PROD/ (umds-patch-store/ ...), which are carried by default' },
  'esx-only': { description: 'carry the ESX depots alone (umds-patch-store/ ...), not PROD/: for a site that patches hosts only' },
  'seal-out': { argument: '<file>', description: 'also write the seal to this file (never inside --out: the seal travels apart from the media)' },
  'pack-signing-cert': {
    argument: '<pem>',
    description: `public key or certificate of the key that signed the pack (pack --signing-key): ${PACK_MANIFEST_SIG_FILE} must verify with it before anything is placed`,
  },
  yes: { description: "remove them, holding the depot's lock (without it, only list them)" },
  // depot move-ca
  'new-ca': { argument: '<file>', description: 'the CA that issued it, as the consumers are to trust it', required: true },
  'old-ca': { argument: '<file>', description: 'the CA the depot is on now (needed with --remove-old; found on the consumers by certificate)' },
  'served-cert': { argument: '<file>', description: 'the certificate file the server serves (replaced atomically)', required: true },
  'served-key': { argument: '<file>', description: 'the key file the server serves (replaced atomically, mode 0600)', required: true },
  'serve-pid': { argument: '<pid-or-file>', description: 'depotkit serve: its pid (or a file holding it), sent SIGHUP', conflicts: ['reload-command'] },
  'reload-command': {
    argument: '<cmd>',
    description: 'another server (an exported site): its reload command, run with /bin/sh (without it or --serve-pid: reload yourself, then run again)',
  },
  site: {
    argument: '<kind>',
    description: 'the kind the site was exported as: without --reload-command, the report names its reload command',
    choices: EXPORT_TARGETS,
    conflicts: ['serve-pid'],
  },
  unit: { argument: '<name>', description: `with --site systemd: the unit's name, as exported with --name (default: ${EXPORT_DEFAULT_NAME})` },
  repoint: { description: 'set --depot-url (with --as-host) on consumers whose depot settings name another host or port' },
  'switch-timeout': {
    argument: '<seconds>',
    description: 'how long the server gets to serve the new certificate after its reload',
    default: 30,
    number: { min: 1, unit: 'second' },
  },
  'trust-settle': {
    argument: '<seconds>',
    description: 'with --reload-command: how long validations the consumers began before they trusted the new CA get to end before the switch',
    default: 5,
    number: { min: 0, unit: 'second' },
  },
  'reload-wait': {
    argument: '<seconds>',
    description: 'on a re-run that finds the new pair written: how long the site gets to take it from a reload under way',
    default: 5,
    number: { min: 0, unit: 'second' },
  },
  'state-file': { argument: '<file>', description: 'where the progress is kept (default: beside --served-cert)' },
  'remove-old': { description: 'once every consumer validated the depot, remove the old CA from them' },
  'skip-unreachable': { description: 'switch even when some consumers cannot be reached (they fail validation until a re-run reaches them)' },
  // esx mirror
  'token-file': { argument: '<file>', description: 'a file whose first line is the download token, put where the URL says {token}', conflicts: ['token-env'] },
  'token-env': { argument: '<name>', description: 'an environment variable that holds the download token' },
  product: {
    argument: '<id>',
    description: "download only this product's VIBs, as the vendor index names it, e.g. embeddedEsx (repeatable)",
    repeatable: true,
    for: { 'depot pack': "carry only this ESX product's VIBs, as the vendor index names it, e.g. embeddedEsx (repeatable)" },
  },
  'product-version': {
    argument: '<version>',
    description: 'download only VIBs of this version of the products, as the vendor index writes it, e.g. 9.* (repeatable)',
    repeatable: true,
    for: { 'depot pack': 'carry only VIBs of this version of the ESX products, as the vendor index writes it, e.g. 9.* (repeatable)' },
  },
  // cert ca, cert sign-csr
  'passphrase-file': { argument: '<file>', description: 'encrypt the CA key with the passphrase on the first line of <file>', conflicts: ['passphrase-env'] },
  'passphrase-env': { argument: '<name>', description: 'encrypt the CA key with the passphrase in environment variable <name>' },
  csr: { argument: '<file>', description: 'the request, PEM', required: true },
  'allow-no-san': { description: 'sign a request without SANs (its CN becomes the SAN)' },
  // serve
  http: { ...SERVE_OPTIONS.http, conflicts: ['user', 'htpasswd'] },
  'metrics-open': SERVE_OPTIONS.metricsOpen,
  'send-timeout': {
    argument: SERVE_OPTIONS.sendTimeout.argument,
    description: SERVE_OPTIONS.sendTimeout.description,
    default: SERVE_OPTIONS.sendTimeout.default,
    number: { min: SERVE_OPTIONS.sendTimeout.min, unit: SERVE_OPTIONS.sendTimeout.unit },
  },
  // check
  'open-path': {
    argument: '<path>',
    description: `with --user: a path that must answer without credentials, asked for without them besides ${CHECK_ANONYMOUS_PATHS.hcl} and ${CHECK_ANONYMOUS_PATHS.patchStore} (repeatable; a trailing / for a folder)`,
    repeatable: true,
  },
  // installer connect-depot, download, status
  'depot-host': { argument: '<host>', description: "the depot's host name (as its certificate names it)" },
  'depot-port': { argument: '<port>', description: "the depot's port", default: INSTALLER_DEFAULTS.depotPort, number: { min: 1, max: 65535 } },
  'trust-ca': {
    argument: '<file-or-dir>',
    description: 'import this CA first, as installer trust does: a CA certificate file or a CA folder (repeatable)',
    repeatable: true,
  },
  'no-sync': {
    description: `do not have the installer sync the depot's metadata once it accepts the depot (by default it does, waiting up to ${INSTALLER_DEFAULTS.syncTimeoutMs / 1000} s: --sync-timeout)`,
  },
  sku: { argument: '<sku>', description: 'the product whose release it is', default: INSTALLER_PRODUCT_SKUS[0] },
  'expiry-warn-days': {
    argument: '<days>',
    description: 'flag a consumer whose trusted depot CA has fewer days left',
    default: INSTALLER_DEFAULTS.depotCaWarnDays,
    number: { min: 0 },
  },
  // vcenter replace-cert, trust
  san: {
    argument: '<name>',
    description: "a subject alternative name (repeatable); the host name of --server and the names of the server's current certificate are always included",
    repeatable: true,
  },
  org: { argument: '<name>', description: 'organization' },
  'org-unit': { argument: '<name>', description: 'organizational unit' },
  country: { argument: '<code>', description: 'two-letter country code' },
  locality: { argument: '<name>', description: 'locality' },
  email: { argument: '<address>', description: 'e-mail address' },
  'trusted-chain': { description: "put the CA into the server's trusted root chains first (as vcenter trust does) and send no root_cert" },
  list: { description: 'list the trusted root chains and their certificates instead' },
  // export
  'server-name': { argument: '<fqdn>', description: "the depot's FQDN as the installer is given it (default: the certificate's first DNS name)" },
  'status-page': { description: "nginx, Apache, Caddy: serve a static copy of serve's status page at / (behind the auth) and the CA certificate at /ca.pem" },
  group: { argument: '<group>', description: 'group that must read the users file (default: www-data for nginx and Apache, caddy, or the service user)' },
  'caddy-version': {
    argument: '<version>',
    description: "Caddy's version, when no caddy here can tell (`caddy version`): basic_auth from 2.8, basicauth before",
  },
  exec: { argument: '<command>', description: 'systemd: the command that runs depotkit (default: the one running now)' },
  'service-user': { argument: '<name>', description: 'systemd: the dedicated user the service runs as (default: the --name); a sysusers.d file creates it' },
  // sim installer, sim vcenter
  'appliance-version': { argument: '<version>', description: 'version appliance-info reports; 9.1 and later take the depot url field' },
  resolve: {
    argument: '<name=address>',
    description: 'reach the depot NAME at ADDRESS, without DNS or a hosts file (repeatable)',
    default: {},
    parse: collectResolve,
  },
  store: { argument: '<dir>', description: 'keep the bundles it downloads here, laid out like the depot (default: only their verdict)' },
  quiet: { description: 'do not print the service log' },
  'restart-ms': { argument: '<n>', description: 'how long the server stops listening after a replacement', default: MGMT_SIM_RESTART_MS, number: {} },
  // quickstart
  'no-serve': { description: 'only make and verify the depot' },
  // vcenter depot
  depot: { argument: '<url>', description: "the ESX depot's root index, as vLCM is given it (https://host[:port]/umds-patch-store/index.xml)", required: true },
  umds: { description: 'set it as the UMDS depot (vCenter then ignores its online depots) instead of adding an online depot' },
  description: { argument: '<text>', description: "the depot's description in vCenter, when it is added" },
};
