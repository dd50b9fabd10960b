import type { AccessLogFormat } from '../server/access-log.js';
import { usageError } from '../util/errors.js';
import { exposedFileWarning } from '../util/fs.js';
import { promptSecret, readSecret, resolvePassword, type SecretPrompt } from '../util/secrets.js';
import { InvalidOption, warn } from './output.js';

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

// ------------------------------------------------------------ time, load, network

// ------------------------------------------------------------ seals

// ------------------------------------------------------------ output

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

// ------------------------------------------------------------ passwords

/** Where a password comes from: a file, an environment variable, or (neither given) a prompt on a terminal. */
export interface PasswordFlags {
  passwordFile?: string;
  passwordEnv?: string;
}

/**
 * The prompt the CLI gives the library's password resolver: on a terminal,
 * one that does not echo; none without a terminal (the library then says
 * which source is missing).
 */
export function terminalPrompt(): SecretPrompt | undefined {
  return process.stdin.isTTY ? promptSecret : undefined;
}

/**
 * A password from its file or variable, or asked for on a terminal, through
 * the library's one resolver; `flag` is how the options start (`--password`,
 * `--depot-password`), for the hint when there is no terminal to ask on.
 */
export async function readPassword(source: { file?: string; env?: string }, what: string, question: string, flag = '--password'): Promise<string> {
  if (source.file !== undefined) await warnIfExposed(source.file);
  const prompt = terminalPrompt();
  if (source.file === undefined && source.env === undefined && prompt === undefined)
    throw usageError(`The ${what} is needed and there is no terminal to ask on.`, `Pass ${flag}-file <file> or ${flag}-env <name>.`);
  return resolvePassword(source, what, prompt, question);
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
