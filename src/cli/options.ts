import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CA_KEY_FILE } from '../cert/files.js';
import type { AccessLogFormat } from '../server/access-log.js';
import { SERVE_OPTIONS, type ServeOptionName, type ServeOptionSpec } from '../server/command-line.js';
import { Option, type Command } from 'commander';
import { usageError } from '../util/errors.js';
import { exposedFileWarning } from '../util/fs.js';
import { promptSecret, readSecret } from '../util/secrets.js';
import { InvalidOption, collect, warn } from './output.js';

/**
 * The options that several commands share, defined once (as npm's
 * definitions.js or smallstep's flags): the same spelling, the same parsing and
 * the same words in every command. A command picks them with its own
 * description where the purpose differs, and its default from the library's
 * default objects. Choices and conflicts are commander's (`.choices()`,
 * `.conflicts()`); program.ts turns its messages into one sentence.
 */

/** A whole number option, checked against its range, with the option's name in the error. */
export function wholeNumber(flag: string, range: { min?: number; max?: number; unit?: string } = {}): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value.trim())) throw new InvalidOption(`${flag} takes a whole number, not "${value}".`);
    const n = Number(value);
    const unit = range.unit ? ` ${range.unit}${range.min === 1 ? '' : 's'}` : '';
    if (range.max !== undefined && (n > range.max || n < (range.min ?? 0)))
      throw new InvalidOption(`${flag} must be between ${range.min ?? 0} and ${range.max}.`);
    if (range.min !== undefined && n < range.min) throw new InvalidOption(`${flag} must be at least ${range.min}${unit}.`);
    return n;
  };
}

// ------------------------------------------------------------ trust and CAs

/**
 * CA certificates to trust: a PEM file (one or several certificates), a CA
 * folder made by `depotkit cert ca`, or a folder of certificate files; read by
 * the one resolver, pki's readCaPems. Repeatable.
 */
export function trustOption(flag: '--ca' | '--server-ca' | '--trust-ca', purpose: string, options: { required?: boolean } = {}): Option {
  const option = new Option(`${flag} <file-or-dir>`, `${purpose}: a CA certificate file or a CA folder (repeatable)`).argParser(collect);
  // Without a default, so that commander can tell a required one is missing.
  return options.required ? option.makeOptionMandatory() : option.default([]);
}

/**
 * One of `values`, in any case when they are upper case (`--image-type install`):
 * commander's `.choices()` with the case folded first; refused in the words of
 * the other choices.
 */
export function choiceOption(flags: string, description: string, values: readonly string[], defaultValue?: string): Option {
  const flag = flags.split(/[ ,]/)[0]!;
  const upper = values.every((v) => v === v.toUpperCase());
  const option = new Option(flags, description).argParser((value: string) => {
    const folded = upper ? value.toUpperCase() : value;
    if (!values.includes(folded)) throw new InvalidOption(`${flag} must be one of ${values.join(', ')}, not "${value}".`);
    return folded;
  });
  // Shown in the help as commander shows choices.
  option.argChoices = [...values];
  return defaultValue === undefined ? option : option.default(defaultValue);
}

/** A CA that signs: the folder `depotkit cert ca` made (its key is needed). */
export function signingCaOption(description = 'the CA folder (from cert ca) whose key signs'): Option {
  return new Option('--ca <dir>', description);
}

/**
 * A signing CA must be a folder (its key is in it): a certificate file given
 * instead is named as such, with the folder it is in when that is a CA folder.
 */
export async function assertSigningCaFolder(path: string, flag = '--ca'): Promise<void> {
  // A path that is not there is the loader's to explain (it names the files a CA folder holds).
  const info = await stat(path).catch(() => undefined);
  if (info === undefined || info.isDirectory()) return;
  const folder = dirname(path);
  const hasKey = (await stat(join(folder, CA_KEY_FILE)).catch(() => undefined))?.isFile() === true;
  throw usageError(
    `${flag} ${path} is a file; signing needs the CA folder, which holds the CA's key.`,
    hasKey ? `Give the folder it is in: ${flag} ${folder}` : 'Make one with: depotkit cert ca --out <dir>',
  );
}

// ------------------------------------------------------------ time, load, network

/** `--timeout` is in seconds in every command; the libraries take milliseconds (`timeoutMs`). */
export function timeoutOption(defaultMs: number, description: string): Option {
  return new Option('--timeout <seconds>', description).argParser(wholeNumber('--timeout', { min: 1, unit: 'second' })).default(defaultMs / 1000);
}

/** A wait in seconds (`--wait-timeout`, `--sync-timeout`, `--grace`, `--send-timeout`). */
export function secondsOption(flag: string, description: string, defaultSeconds: number, min = 1): Option {
  return new Option(`${flag} <seconds>`, description).argParser(wholeNumber(flag, { min, unit: 'second' })).default(defaultSeconds);
}

export function concurrencyOption(defaultValue: number, description: string): Option {
  return new Option('--concurrency <n>', description).argParser(wholeNumber('--concurrency', { min: 1 })).default(defaultValue);
}

/** A port to listen on (0 picks a free one) or to write into a configuration (`min` 1). */
export function portOption(defaultPort: number | undefined, description: string, min = 0): Option {
  const option = new Option('--port <n>', description).argParser(wholeNumber('--port', { min, max: 65535 }));
  return defaultPort === undefined ? option : option.default(defaultPort);
}

export function hostOption(defaultHost: string | undefined, description = 'address to listen on'): Option {
  const option = new Option('--host <addr>', description);
  return defaultHost === undefined ? option : option.default(defaultHost);
}

// ------------------------------------------------------------ seals

/**
 * `--expect <seal>`: the seal a person carried from the other site apart from
 * the media or the network (`catalog <code>`, for a pack `... manifest
 * <code>`), which what arrived must match (transfer/seal.ts reads it).
 */
export function expectSealOption(what: string): Option {
  return new Option('--expect <seal>', `the seal carried from the other site ("catalog <code>"): refuse ${what} that does not match it`);
}

// ------------------------------------------------------------ output

/** `--signing-cert`: the key that signed a depotkit-made catalog, for depot verify's checks. */
export function signingCertOption(description = 'public key or certificate that signed a depotkit-made catalog'): Option {
  return new Option('--signing-cert <pem>', description);
}

export function jsonOption(what = 'print the result as JSON'): Option {
  return new Option('--json', what);
}

export function forceOption(what: string): Option {
  return new Option('--force', what);
}

// ------------------------------------------------------------ serve's options

/** The values commander gives for the options of serve that export has too. */
export interface ServeOptionValues extends PasswordFlags {
  host?: string;
  port: number;
  cert?: string;
  key?: string;
  ca?: string;
  dns: string[];
  ip: string[];
  user?: string;
  htpasswd?: string;
  open: string[];
  openHcl?: boolean;
  workers?: number;
  accessLog?: string;
  logFormat: AccessLogFormat;
  grace: number;
  json?: boolean;
}

/**
 * An option of `serve` as server/command-line.ts defines it (`export` writes them into a unit): its flag,
 * parser and choices from there, with this command's description, default or least value where they differ.
 */
export function serveOption(name: ServeOptionName, own: { description?: string; default?: string | number; min?: number } = {}): Option {
  const spec: ServeOptionSpec = SERVE_OPTIONS[name];
  const option = new Option(spec.argument ? `${spec.flag} ${spec.argument}` : spec.flag, own.description ?? spec.description);
  const min = own.min ?? spec.min;
  if (min !== undefined) option.argParser(wholeNumber(spec.flag, { min, max: spec.max, unit: spec.unit }));
  if (spec.repeatable) option.argParser(collect).default([]);
  if (spec.choices) option.choices(spec.choices);
  const value = 'default' in own ? own.default : spec.default;
  return value === undefined ? option : option.default(value);
}

// ------------------------------------------------------------ passwords

/** Where a password comes from: a file, an environment variable, or (neither given) a prompt on a terminal. */
export interface PasswordFlags {
  passwordFile?: string;
  passwordEnv?: string;
}

/**
 * `--<prefix>password-file` and `--<prefix>password-env` (they exclude each
 * other); without both, the password is asked for on a terminal. Never a
 * `--password`: the command line shows in `ps` and the shell's history.
 */
export function passwordFileOption(whose: string, prefix = ''): Option {
  return new Option(`--${prefix}password-file <file>`, `a file whose first line is ${whose} password`).conflicts(camel(`--${prefix}password-env`));
}

export function passwordEnvOption(whose: string, prefix = ''): Option {
  return new Option(`--${prefix}password-env <name>`, `an environment variable that holds ${whose} password (without either: asked on a terminal)`);
}

/** `--user <name>`: the user a command logs in as, or the one a server or simulator lets in. */
export function userOption(description: string, defaultUser?: string): Option {
  const option = new Option('--user <name>', description);
  return defaultUser === undefined ? option : option.default(defaultUser);
}

/** What a simulator listens on and whom it lets in: the address, the port (0 picks a free one), its own name, the user and its password file. */
export function simulatorOptions(cmd: Command, defaultUser: string, hostnameDescription: string): Command {
  return cmd
    .addOption(hostOption('127.0.0.1'))
    .addOption(portOption(0, 'port (0 picks a free one)'))
    .option('--hostname <name>', hostnameDescription)
    .addOption(userOption('the user that may log in', defaultUser))
    .addOption(passwordFileOption("that user's"));
}

/** A password from its file or variable, or asked for on a terminal; `flag` is how the options start (`--password`, `--depot-password`). */
export async function readPassword(source: { file?: string; env?: string }, what: string, prompt: string, flag = '--password'): Promise<string> {
  if (source.file !== undefined) {
    await warnIfExposed(source.file);
    return readSecret({ file: source.file }, what);
  }
  if (source.env !== undefined) return readSecret({ env: source.env }, what);
  if (!process.stdin.isTTY) throw usageError(`The ${what} is needed and there is no terminal to ask on.`, `Pass ${flag}-file <file> or ${flag}-env <name>.`);
  return promptSecret(prompt);
}

/** The password of `user` (`role` names what kind of user: `depot user `), from its file, its variable or a prompt. */
export function readUserPassword(user: string, flags: PasswordFlags, role = ''): Promise<string> {
  return readPassword({ file: flags.passwordFile, env: flags.passwordEnv }, `password of ${role}${user}`, `Password of ${role}${user}`);
}

/** The depot user's password when a user is given; a password source without the user is refused. */
export async function depotUserPassword(user: string | undefined, flags: PasswordFlags): Promise<string | undefined> {
  assertUserForPassword(user, flags);
  return user === undefined ? undefined : readUserPassword(user, flags, 'depot user ');
}

/** Basic auth of a server (serve, export): an htpasswd file, or one user with its password; none without either. */
export async function basicAuthFrom(
  opts: PasswordFlags & { user?: string; htpasswd?: string },
): Promise<{ htpasswdFile: string } | { user: string; password: string } | undefined> {
  if (opts.htpasswd) return { htpasswdFile: opts.htpasswd };
  const password = await depotUserPassword(opts.user, opts);
  return opts.user === undefined || password === undefined ? undefined : { user: opts.user, password };
}

/** A password source given without the user it belongs to. */
export function assertUserForPassword(user: string | undefined, flags: PasswordFlags, userFlag = '--user', flag = '--password'): void {
  if (user !== undefined) return;
  if (flags.passwordFile !== undefined) throw usageError(`${flag}-file needs ${userFlag}: whose password is it?`);
  if (flags.passwordEnv !== undefined) throw usageError(`${flag}-env needs ${userFlag}: whose password is it?`);
}

/**
 * Anyone who can read a password file or a CA key has what it guards: said on
 * stderr, as ssh says of a private key. Only regular files (a pipe or
 * /dev/stdin carries no such risk).
 */
export async function warnIfExposed(path: string): Promise<void> {
  const warning = await exposedFileWarning(path);
  if (warning) warn(warning);
}

// ------------------------------------------------------------ proxy

/** What the proxy options give. */
export interface ProxyFlags {
  proxy?: string;
  proxyUser?: string;
  proxyPasswordFile?: string;
  proxyPasswordEnv?: string;
  proxyCredentialsFile?: string;
  noproxy?: string;
}

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

/**
 * The HTTP(S) proxy on the way out, named as curl takes it: `--proxy` or the
 * environment, a Basic account (a user with its password pair, or
 * user:password in a file), and the hosts reached without it.
 */
export function addProxyOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        '--proxy <url>',
        'an HTTP(S) proxy to go through (http://host:port; "" for none); without it, https_proxy or HTTPS_PROXY (http_proxy or HTTP_PROXY for an http:// URL)',
      ).argParser(proxyUrl),
    )
    .option('--proxy-user <name>', "the proxy's Basic user")
    .addOption(passwordFileOption("the proxy user's", 'proxy-'))
    .addOption(passwordEnvOption("the proxy user's", 'proxy-'))
    .addOption(
      new Option('--proxy-credentials-file <file>', "a file whose first line is the proxy's user:password").conflicts([
        'proxyUser',
        'proxyPasswordFile',
        'proxyPasswordEnv',
      ]),
    )
    .option(
      '--noproxy <hosts>',
      'hosts reached without the proxy, as NO_PROXY lists them (names and their subdomains, addresses, blocks, :port; * for all); instead of no_proxy or NO_PROXY',
    );
}

/** The proxy options as the library takes them (`proxy`, `proxyUser`, `proxyPassword`, `noProxy`), the password read from its file, variable or a prompt. */
export async function readProxyOptions(flags: ProxyFlags): Promise<{ proxy?: string; proxyUser?: string; proxyPassword?: string; noProxy?: string }> {
  const named = { ...(flags.proxy !== undefined ? { proxy: flags.proxy } : {}), ...(flags.noproxy !== undefined ? { noProxy: flags.noproxy } : {}) };
  if (flags.proxyCredentialsFile !== undefined) {
    const file = flags.proxyCredentialsFile;
    await warnIfExposed(file);
    const line = await readSecret({ file }, 'proxy user and password');
    const colon = line.indexOf(':');
    if (colon <= 0) throw usageError(`The first line of ${file} is not the proxy's user:password (a user, a colon, the password).`);
    return { ...named, proxyUser: line.slice(0, colon), proxyPassword: line.slice(colon + 1) };
  }
  const user = flags.proxyUser;
  assertUserForPassword(user, { passwordFile: flags.proxyPasswordFile, passwordEnv: flags.proxyPasswordEnv }, '--proxy-user', '--proxy-password');
  if (user === undefined) return named;
  const what = `password of proxy user ${user}`;
  return {
    ...named,
    proxyUser: user,
    proxyPassword: await readPassword(
      { file: flags.proxyPasswordFile, env: flags.proxyPasswordEnv },
      what,
      `Password of proxy user ${user}`,
      '--proxy-password',
    ),
  };
}

// ------------------------------------------------------------ pairs

/** Why two options exclude each other, where "not both" alone would leave the user guessing. */
const CONFLICT_REASONS: Record<string, string> = {
  'htpasswd http': 'Basic auth over plain HTTP would send the passwords in clear text',
  'http user': 'Basic auth over plain HTTP would send the password in clear text',
  'ca cert': '--ca issues the certificate that --cert would give',
  'ca key': '--ca issues the certificate whose key --key would give',
  'cert http': '--http turns TLS off',
  'ca http': '--http turns TLS off',
  'http key': '--http turns TLS off',
  'insecure server-ca': '--insecure trusts any certificate',
  'insecure installer-ca': '--insecure trusts any certificate',
};

/** The sentence for two options given together that exclude each other. */
export function conflictSentence(a: string, b: string): string {
  const reason =
    CONFLICT_REASONS[
      [a, b]
        .map((f) => f.replace(/^--/, ''))
        .sort()
        .join(' ')
    ];
  return `Give ${a} or ${b}, not both${reason ? `: ${reason}` : ''}.`;
}

/** Options that only work together (`--cert` and `--key`): both or neither. */
export function assertTogether(given: Record<string, unknown>, flags: [string, string], why = ''): void {
  const [a, b] = flags;
  if ((given[camel(a)] === undefined) !== (given[camel(b)] === undefined)) throw usageError(`${a} and ${b} go together${why ? `: ${why}` : ''}.`);
}

/** `--password-file` -> `passwordFile`, as commander names the option's value. */
export function camel(flag: string): string {
  return flag.replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}
