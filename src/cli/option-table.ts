import { Option, type Command } from 'commander';
import { ONE_COMMAND_ROWS } from './option-rows-one.js';
import { REACH_ROWS } from './option-rows-reach.js';
import { SHARED_ROWS, type OptionRow, type OptionSpec } from './option-rows.js';
import { camel, wholeNumber } from './options.js';
import { InvalidOption, collect } from './output.js';

/**
 * Every option of every command, defined once (as npm's definitions.js): the
 * rows (option-rows.ts, option-rows-one.ts) give each option's flag, value,
 * description, default and parser, with what differs for a command; TAKES
 * names which commands take which, in the order their help lists them. A
 * command file calls withOptions(cmd) and declares none itself
 * (test/architecture/flags.test.ts holds it to that).
 */
export const OPTION_TABLE: Readonly<Record<string, OptionRow>> = { ...SHARED_ROWS, ...REACH_ROWS, ...ONE_COMMAND_ROWS };

/** What every command that works on installers takes (installer-run.ts runs them). */
const CONNECTION = ['installer', 'inventory', 'role', 'user', 'password-file', 'password-env', 'installer-ca', 'insecure', 'timeout', 'concurrency', 'json'];
/** Which binaries pack, mirror and check carry (all metadata always). */
const SELECTION = ['release', 'component', 'image-type'];
/** How long a mirror waits, and how slow a download may go, before giving it up; and the proxy it goes through. */
const PACE_AND_PROXY = ['timeout', 'min-speed', 'proxy', 'proxy-user', 'proxy-password-file', 'proxy-password-env', 'proxy-credentials-file', 'noproxy'];
const CA_PASSPHRASE = ['ca-passphrase-file', 'ca-passphrase-env'];
/** What a simulator listens on and whom it lets in. */
const SIMULATOR = ['host', 'port', 'hostname', 'user', 'password-file', 'password-env'];

/** The options each command takes, by its words after `depotkit` (an alias is not a name here), in the order of its help. */
export const TAKES: Readonly<Record<string, readonly string[]>> = {
  'depot demo': ['release', 'releases', 'binary-size', 'signing-dir', 'esx', 'force', 'json'],
  'depot build': ['metadata', 'binaries', 'out', 'mode', 'checksum', 'force', 'json'],
  'depot verify': ['deep', 'signing-cert', 'json'],
  'depot pack': ['out', 'volume-size', 'since', 'signing-key', 'seal-out', 'no-esx', 'esx-only', 'product', 'product-version', 'force', 'json', ...SELECTION],
  'depot unpack': ['out', 'force', 'expect', 'pack-signing-cert', 'signing-cert', 'json'],
  'depot mirror': [
    ...['out', 'ca', 'user', 'password-file', 'password-env', 'allow-http-credentials', 'concurrency', 'expect', 'force', 'signing-cert', 'json'],
    ...PACE_AND_PROXY,
    ...SELECTION,
  ],
  'depot prune': ['yes', 'json'],
  'depot diff': ['json'],
  'depot move-ca': [
    ...['cert', 'key', 'new-ca', 'old-ca', 'served-cert', 'served-key', 'serve-pid', 'reload-command', 'site', 'unit', 'depot-url', 'as-host', 'repoint'],
    ...['depot-user', 'depot-password-file', 'depot-password-env', 'name', 'inventory', 'password-file', 'password-env', 'installer-ca', 'insecure'],
    ...['timeout', 'concurrency', 'switch-timeout', 'trust-settle', 'reload-wait', 'state-file', 'remove-old', 'skip-unreachable', 'dry-run', 'json'],
  ],
  'esx verify': ['deep', 'json'],
  'esx check': ['ca', 'as-host', 'deep', 'concurrency', 'timeout', 'json'],
  'esx import': ['out', 'force', 'json'],
  'esx mirror': ['out', 'ca', 'token-file', 'token-env', 'product', 'product-version', 'expect', 'concurrency', 'force', 'json', ...PACE_AND_PROXY],
  'cert ca': ['out', 'cn', 'days', 'key-size', 'passphrase-file', 'passphrase-env', 'force', 'json'],
  'cert issue': ['signing-ca', 'dns', 'ip', 'out', 'days', 'key-size', 'allow-ip-only', ...CA_PASSPHRASE, 'force', 'json'],
  'cert renew': ['signing-ca', 'out', 'days', ...CA_PASSPHRASE, 'force', 'json'],
  'cert sign-csr': ['signing-ca', 'csr', 'out', 'days', 'allow-no-san', 'allow-ip-only', ...CA_PASSPHRASE, 'force', 'json'],
  'cert inspect': ['host', 'ip', 'ca', 'json'],
  serve: [
    ...['host', 'port', 'cert', 'key', 'signing-ca', 'dns', 'ip', 'user', 'password-file', 'password-env', 'htpasswd', 'http', 'open', 'open-hcl'],
    ...['metrics-open', 'workers', 'access-log', 'log-format', 'grace', 'send-timeout', 'json'],
  ],
  check: [
    ...['ca', 'user', 'password-file', 'password-env', 'as-host', 'allow-http-credentials', 'open-path', 'deep', 'concurrency', 'timeout', 'json'],
    ...SELECTION,
  ],
  'installer trust': [...CONNECTION, 'ca', 'remove', 'force'],
  'installer connect-depot': [
    ...CONNECTION,
    ...['depot-url', 'depot-host', 'depot-port', 'depot-user', 'depot-password-file', 'depot-password-env', 'trust-ca', 'force', 'wait-timeout', 'no-sync'],
    'sync-timeout',
  ],
  'installer sync': [...CONNECTION, 'sync-timeout'],
  'installer releases': CONNECTION,
  'installer download': [...CONNECTION, 'release', 'image-type', 'component', 'sku', 'wait-timeout'],
  'installer status': [...CONNECTION, 'ca', 'expiry-warn-days'],
  'vcenter depot': ['depot', 'umds', 'description', 'user', 'password-file', 'password-env', 'server-ca', 'insecure', 'sync-timeout', 'json'],
  'vcenter trust': ['server', 'user', 'password-file', 'password-env', 'ca', 'list', 'remove', 'api', 'server-ca', 'insecure', 'json'],
  'vcenter replace-cert': [
    ...['server', 'user', 'password-file', 'password-env', 'signing-ca', 'cn', 'san', 'org', 'org-unit', 'country', 'state', 'locality', 'email'],
    ...['key-size', 'days', 'api', 'server-ca', 'insecure', 'dry-run', 'cert', 'key', 'trusted-chain', 'wait-timeout', 'json'],
  ],
  export: [
    ...['out', 'name', 'host', 'port', 'server-name', 'cert', 'key', 'signing-ca', 'dns', 'ip', 'user', 'password-file', 'password-env', 'htpasswd'],
    ...['open', 'open-hcl', 'status-page', 'group', 'caddy-version', 'access-log', 'log-format', 'workers', 'grace', 'exec', 'service-user', 'force', 'json'],
  ],
  'sim installer': [...SIMULATOR, 'state', 'appliance-version', 'role', 'cert-out', 'resolve', 'store', 'quiet', 'json'],
  'sim vcenter': [...SIMULATOR, 'restart-ms', 'cert-out', 'json'],
  quickstart: ['no-serve', 'host', 'port'],
};

/** The options the table made, for the test that finds any option declared elsewhere. */
const made = new WeakSet<Option>();

export function isFromTable(option: Option): boolean {
  return made.has(option);
}

/** A command's words after `depotkit` (`installer connect-depot`). */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** The row `name` as the command `path` takes it. */
export function optionSpec(name: string, path: string): OptionSpec {
  const row = OPTION_TABLE[name];
  if (row === undefined) throw new Error(`The option table has no row ${name}.`);
  const own = row.for?.[path];
  return { ...row, ...(typeof own === 'string' ? { description: own } : own) };
}

/** One of upper-case `values`, in any case (`--image-type install`); refused in the words of the other choices. */
function anyCaseChoice(flag: string, values: readonly string[]): (value: string) => string {
  return (value) => {
    const folded = value.toUpperCase();
    if (!values.includes(folded)) throw new InvalidOption(`${flag} must be one of ${values.join(', ')}, not "${value}".`);
    return folded;
  };
}

function tableOption(name: string, path: string): Option {
  const spec = optionSpec(name, path);
  const flag = spec.flag ?? `--${name}`;
  const option = new Option(spec.argument ? `${flag} ${spec.argument}` : flag, spec.description);
  if (spec.number) option.argParser(wholeNumber(flag, spec.number));
  if (spec.parse) option.argParser(spec.parse as (value: string, previous: unknown) => unknown);
  // Without a default when required, so that commander can tell a required one is missing.
  if (spec.repeatable) option.argParser(collect).default(spec.required ? undefined : []);
  // Shown in the help as commander shows choices; upper-case ones taken in any case.
  if (spec.choices && spec.anyCase) option.argParser(anyCaseChoice(flag, spec.choices));
  if (spec.choices && spec.anyCase) option.argChoices = [...spec.choices];
  else if (spec.choices) option.choices(spec.choices);
  if (spec.default !== undefined) option.default(spec.default, spec.defaultShown);
  if (spec.required) option.makeOptionMandatory();
  if (spec.conflicts) option.conflicts(spec.conflicts.map((f) => camel(`--${f}`)));
  made.add(option);
  return option;
}

/** Adds the options the table gives the command `cmd` (by its words after `depotkit`); returns it, for commander's chain. */
export function withOptions(cmd: Command): Command {
  const path = commandPath(cmd);
  const names = TAKES[path];
  if (names === undefined) throw new Error(`The option table names no options for ${path}.`);
  for (const name of names) cmd.addOption(tableOption(name, path));
  return cmd;
}
