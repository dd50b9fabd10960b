import {
  BUNDLE_TYPES,
  DEPOT_PATHS,
  EXPORT_DEFAULT_PORT,
  INSTALLER_IMAGE_TYPES,
  MGMT_CSR_KEY_SIZES,
  MGMT_CSR_VALIDITY_DAYS,
  RELEASES,
  UMDS_PATCH_STORE_DIR,
} from '../constants.js';
import { DEFAULT_CA_CN, DEFAULT_CA_DAYS, DEFAULT_CA_KEY_SIZE, RSA_KEY_SIZES, SERVER_PROFILE } from '../cert/profiles.js';
import { SERVE_OPTIONS, type ServeOptionName } from '../server/command-line.js';
import { defaultServingProcesses, SERVE_DEFAULT_PORT } from '../server/tuning.js';
import { API_CHOICES } from '../vcenter/choices.js';

/**
 * An option as the table defines it: what commander is given for it
 * (option-table.ts makes the commander Option). `conflicts` names flags
 * without their dashes.
 */
export interface OptionSpec {
  /** The flag when it is not `--<name>` (two rows of one flag with different meanings, `--ca`). */
  readonly flag?: string;
  /** The value's placeholder (`<file>`); none for a switch. */
  readonly argument?: string;
  readonly description: string;
  readonly default?: string | number | Record<string, string>;
  /** How the help shows the default, when not as the value itself. */
  readonly defaultShown?: string;
  readonly required?: boolean;
  /** Given again for each value; the values collect into a list (empty by default). */
  readonly repeatable?: boolean;
  /** A whole number, from `min` (to `max`), in `unit`s when it has one. */
  readonly number?: { readonly min?: number; readonly max?: number; readonly unit?: 'second' };
  readonly choices?: readonly string[];
  /** Upper-case choices taken in any case (`--image-type install`). */
  readonly anyCase?: boolean;
  /** Any other parser; it throws InvalidOption with the sentence. */
  readonly parse?: (value: string, previous: never) => unknown;
  readonly conflicts?: readonly string[];
}

/** What differs for one command: its own description (a string), or any other field (undefined unsets one). */
export type OptionVariant = string | { readonly [K in keyof OptionSpec]?: OptionSpec[K] | undefined };

/** A table row: the option, and what differs for the commands (`'cert issue'`) whose use of it differs. */
export interface OptionRow extends OptionSpec {
  readonly for?: Readonly<Record<string, OptionVariant>>;
}

/** A row of serve's options as server/command-line.ts spells them (it writes them into a systemd unit too). */
export function serveRow(name: ServeOptionName, row: Omit<OptionRow, 'description'> = {}): OptionRow {
  const spec: { flag: string; argument?: string; description: string; default?: string | number; min?: number; max?: number; unit?: 'second' } =
    SERVE_OPTIONS[name];
  const { flag: _flag, min, max, unit, ...rest } = spec;
  return { ...rest, ...(min !== undefined ? { number: { min, ...(max !== undefined ? { max } : {}), ...(unit ? { unit } : {}) } } : {}), ...row };
}

const SELECTION = (verb: string) => ({
  release: `${verb} only the binaries this release needs (the builds its manifest BOM names), e.g. 9.0.1.0 (repeatable)`,
  component: `${verb} only this component's binaries, e.g. VCENTER (repeatable)`,
  imageType: `${verb} only the binaries of bundles of this type: ${[...new Set([...BUNDLE_TYPES, ...INSTALLER_IMAGE_TYPES])].join(', ')}`,
});
const [PACK, MIRROR, CHECK] = [SELECTION('pack'), SELECTION('download'), SELECTION('expect')];

/** The options more than one command takes: what they write, which binaries, certificates, serving (option-rows-reach.ts: reaching other systems). */
export const SHARED_ROWS: Readonly<Record<string, OptionRow>> = {
  // ------------------------------------------------------------ output and overwriting
  json: {
    description: 'print the report as JSON',
    for: {
      'depot demo': 'print the result as JSON',
      'cert ca': 'print the result as JSON',
      'cert issue': 'print the result as JSON',
      'cert renew': 'print the result as JSON',
      'cert sign-csr': 'print the result as JSON',
      'cert inspect': 'print the result as JSON',
      'installer trust': 'print the result rows as JSON',
      'installer connect-depot': 'print the result rows as JSON',
      'installer sync': 'print the result rows as JSON',
      'installer releases': 'print the result rows as JSON',
      'installer download': 'print the result rows as JSON',
      'installer status': 'print the result rows as JSON',
      'depot verify': 'print the findings as JSON',
      'esx check': 'print the findings as JSON',
      check: 'print the findings as JSON',
      'sim installer': 'print the address as JSON',
      'sim vcenter': 'print the address as JSON',
      'esx verify': 'print the depots and findings as JSON',
      serve: 'print the listening address as JSON once ready',
    },
  },
  force: {
    description: 'replace files that exist',
    for: {
      'depot demo': 'write into a folder that is not empty',
      'depot build': 'replace metadata or binaries that differ from what is given',
      'depot pack': 'replace an earlier pack in --out (and the --seal-out file)',
      'depot unpack': "replace different files in a depot that is neither the pack's source nor its base, or metadata newer than the pack's",
      'depot mirror': "mirror into a folder holding another depot, or one whose catalog is newer than the source's",
      'esx import': 'replace VIBs in place whose bytes are not the ones their metadata states',
      'esx mirror': 'mirror into a folder holding an ESX depot mirrored from another URL',
      'cert ca': 'replace an existing CA in <dir>',
      'cert issue': 'replace existing files in <out>',
      'cert renew': 'replace the files there (the old ones, without --out)',
      'cert sign-csr': 'replace an existing <file>',
      'installer trust': "with --remove: remove one even when it anchors the chain of the consumer's configured depot",
      'installer connect-depot': 'push even when the installer already has these settings and reaches the depot',
    },
  },
  out: {
    argument: '<dir>',
    description: 'the ESX depot folder (e.g. /srv/depot/umds-patch-store)',
    required: true,
    for: {
      'depot build': 'the depot root (the folder that will contain PROD/)',
      'depot pack': 'the folder for the volumes, the manifest and SHA256SUMS (e.g. the removable medium)',
      'depot unpack': { argument: '<depot-dir>', description: 'the depot root to place the files in' },
      'depot mirror': { argument: '<depot-dir>', description: 'the local depot root' },
      'cert ca': 'the CA folder',
      'cert issue': 'the folder to write to',
      'cert renew': { description: 'write the new files there instead of over the old ones', required: undefined },
      'cert sign-csr': { argument: '<file>', description: 'where to write the certificate, PEM' },
      export: 'folder for the files; the configuration names them there by absolute path, so write them where they will stay (e.g. /etc/depotkit)',
    },
  },
  deep: {
    description: 'hash every binary and compare with the catalog',
    for: {
      'esx verify': "hash every VIB and compare with its metadata's SHA-256",
      'esx check': "download every VIB and compare its SHA-256 with its metadata's",
      check: 'download every binary and compare its SHA-256 with the catalog',
    },
  },
  'dry-run': {
    description: 'judge the new certificate and print the plan; change nothing',
    for: { 'vcenter replace-cert': 'connect, log in and show what would be done; request no CSR and replace nothing' },
  },
  // ------------------------------------------------------------ which binaries
  release: {
    argument: '<version>',
    description: PACK.release,
    repeatable: true,
    for: {
      'depot demo': {
        argument: '<release>',
        description: 'release whose components to lay out',
        repeatable: undefined,
        choices: RELEASES,
        default: RELEASES[0],
      },
      'depot mirror': MIRROR.release,
      check: CHECK.release,
      'installer download': { description: 'the release, as the installer lists it (e.g. 9.0.1.0)', repeatable: undefined, required: true },
    },
  },
  component: {
    argument: '<name>',
    description: PACK.component,
    repeatable: true,
    for: { 'depot mirror': MIRROR.component, check: CHECK.component, 'installer download': 'only the bundles of this component (repeatable)' },
  },
  'image-type': {
    argument: '<type>',
    description: PACK.imageType,
    for: {
      'depot mirror': MIRROR.imageType,
      check: CHECK.imageType,
      'installer download': { description: 'the kind of bundles', choices: INSTALLER_IMAGE_TYPES, anyCase: true, default: INSTALLER_IMAGE_TYPES[0] },
    },
  },
  // ------------------------------------------------------------ seals and signatures
  expect: {
    argument: '<seal>',
    description: 'the seal carried from the other site ("catalog <code>"): refuse media that does not match it',
    for: {
      'depot mirror': 'the seal carried from the other site ("catalog <code>"): refuse a source whose catalog that does not match it',
      'esx mirror': 'the seal carried from the other site ("esx <code>"): refuse a source whose indexes and metadata do not match it',
    },
  },
  'signing-cert': {
    argument: '<pem>',
    description: 'public key or certificate that signed a depotkit-made catalog',
    for: {
      'depot unpack': "public key or certificate that signed a depotkit-made catalog (for the final checks; the pack's own signature is --pack-signing-cert)",
      'depot mirror': 'public key or certificate that signed a depotkit-made catalog (for the final checks)',
    },
  },
  // ------------------------------------------------------------ certificates
  /** A CA that signs: the folder `depotkit cert ca` made (its key is needed). */
  'signing-ca': serveRow('ca', {
    flag: '--ca',
    for: {
      serve: { conflicts: ['http'] },
      'cert issue': { description: 'the CA folder (from cert ca) whose key signs', required: true },
      'cert renew': { description: 'the CA folder (from cert ca) whose key signs', required: true },
      'cert sign-csr': { description: 'the CA folder (from cert ca) whose key signs', required: true },
      'vcenter replace-cert': {
        description:
          "the toolkit's CA folder; an intermediate CA's ca-cert.pem holds its issuers up to the root after it (with --cert, a CA certificate file or folder is enough)",
        required: true,
      },
      export: 'systemd only: depotkit serve issues its certificate from this CA folder',
    },
  }),
  cert: {
    argument: '<file>',
    description: 'install this certificate made elsewhere (leaf first, intermediates may follow) instead of a CSR',
    for: {
      'depot move-ca': { description: 'the new server certificate PEM (leaf first, its intermediates after)', required: true },
      serve: { description: SERVE_OPTIONS.cert.description, conflicts: ['ca', 'http'] },
      export: 'server certificate PEM, best the chain (leaf then CA), read where it is',
    },
  },
  key: {
    argument: '<file>',
    description: 'the private key of --cert',
    for: {
      'depot move-ca': { description: 'its private key PEM', required: true },
      serve: { description: SERVE_OPTIONS.key.description, conflicts: ['ca', 'http'] },
      export: 'its private key PEM, read where it is',
    },
  },
  cn: {
    argument: '<name>',
    description: 'the CA common name',
    default: DEFAULT_CA_CN,
    for: { 'vcenter replace-cert': { description: 'subject common name (default: the host name of --server)', default: undefined } },
  },
  days: {
    argument: '<n>',
    description: 'validity in days',
    default: SERVER_PROFILE.validity.days,
    number: { min: 1 },
    for: {
      'cert ca': { default: DEFAULT_CA_DAYS },
      'cert sign-csr': { default: SERVER_PROFILE.validity.csrDays },
      'vcenter replace-cert': {
        description: `validity of the certificate signed for the server's CSR (the server's own flow implies ${MGMT_CSR_VALIDITY_DAYS}; other values are warned about)`,
        default: MGMT_CSR_VALIDITY_DAYS,
      },
    },
  },
  // commander's choices are strings; the library takes the number.
  'key-size': {
    argument: '<bits>',
    description: 'RSA key size',
    default: String(SERVER_PROFILE.key.bits),
    choices: RSA_KEY_SIZES.map(String),
    for: {
      'cert ca': { default: String(DEFAULT_CA_KEY_SIZE) },
      'vcenter replace-cert': {
        description: "key size the server generates (default: the server's)",
        default: undefined,
        choices: MGMT_CSR_KEY_SIZES.map(String),
      },
    },
  },
  dns: serveRow('dns', {
    for: {
      'cert issue': 'a DNS name; the first is the CN (repeatable)',
      export: 'systemd with --ca: a DNS name of the issued certificate (repeatable)',
    },
  }),
  ip: serveRow('ip', {
    for: {
      'cert issue': 'an IP address for the SAN (repeatable)',
      'cert inspect': 'an IP the SAN must also hold, as the 9.1 depot service requires (repeatable)',
      export: 'systemd with --ca: an IP address of the issued certificate (repeatable)',
    },
  }),
  'allow-ip-only': {
    description: 'allow a certificate without a DNS name (the installer rejects it)',
    for: { 'cert sign-csr': 'sign a request whose CN is an IP or whose only names are IPs (the installer rejects it)' },
  },
  'ca-passphrase-file': { argument: '<file>', description: "the CA key's passphrase, first line of <file>", conflicts: ['ca-passphrase-env'] },
  'ca-passphrase-env': { argument: '<name>', description: "the CA key's passphrase, in environment variable <name>" },
  // ------------------------------------------------------------ serving (serve, export, the simulators, quickstart)
  host: serveRow('host', {
    for: {
      'cert inspect': { argument: '<name>', description: 'the host name (or IP) the installer connects to', default: undefined },
      export: { description: 'address to listen on (default: every address)', default: undefined },
      quickstart: { description: 'address to serve on', default: '127.0.0.1' },
      'sim installer': { default: '127.0.0.1' },
      'sim vcenter': { default: '127.0.0.1' },
    },
  }),
  port: serveRow('port', {
    for: {
      export: { description: 'port', default: EXPORT_DEFAULT_PORT, number: { min: 1, max: 65535 } },
      quickstart: { description: 'port to serve on', default: SERVE_DEFAULT_PORT },
      'sim installer': { description: 'port (0 picks a free one)', default: 0 },
      'sim vcenter': { description: 'port (0 picks a free one)', default: 0 },
    },
  }),
  open: serveRow('open', { for: { export: `leave a path prefix under the root without auth (repeatable), e.g. ${UMDS_PATCH_STORE_DIR}` } }),
  'open-hcl': serveRow('openHcl', { for: { export: `leave ${DEPOT_PATHS.hclDir} without auth, as the vendor's web-server recipe does` } }),
  workers: serveRow('workers', {
    default: defaultServingProcesses(),
    for: { export: { description: "systemd: serving processes (default: serve's, one per core beyond the first)", default: undefined } },
  }),
  'access-log': serveRow('accessLog', {
    for: { export: "access log file (systemd: default /var/log/<name>/access.log with a logrotate file; '-' for the journal)" },
  }),
  'log-format': serveRow('logFormat', { for: { export: 'systemd: access log format' } }),
  grace: serveRow('grace', { for: { export: 'systemd: how long running downloads may finish on stop' } }),
  hostname: {
    argument: '<name>',
    description: 'name in its self-signed certificate (default: --host)',
    for: { 'sim vcenter': "the server's own name, in its CSRs' CN and SAN when a request names none (default: --host)" },
  },
  'cert-out': {
    argument: '<file>',
    description: 'write its self-signed certificate here (for --installer-ca)',
    for: { 'sim vcenter': "write the server's initial self-signed certificate here (to pass as --server-ca)" },
  },
  // ------------------------------------------------------------ the management server (vCenter)
  server: { argument: '<url>', description: 'the management server, https://host[:port]', required: true },
  api: {
    argument: '<generation>',
    description: 'API generation: auto uses the newer /api when the server has it',
    default: API_CHOICES[0],
    choices: API_CHOICES,
  },
  state: {
    argument: '<name>',
    description: 'state or province',
    for: { 'sim installer': { argument: '<file>', description: 'keep trusted certificates, depot settings and tokens in this file across restarts' } },
  },
};
