import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { SERVE_TLS_CIPHERS, TLS12_SUITE_IANA_NAMES } from '../constants.js';
import { usageError } from '../util/errors.js';

/**
 * Values that go into a server's configuration file. Each server quotes and escapes differently
 * (nginx variables, Caddy placeholders, systemd specifiers), so rather than escaping for four
 * syntaxes the values are kept to characters that mean nothing special in any of them.
 */
const SAFE_PATH = /^\/[A-Za-z0-9._/@+,:=~-]*$/;

/** An absolute path safe to write into any of the configurations; `what` names it in the error. */
export function configPath(path: string, what: string): string {
  if (!SAFE_PATH.test(path)) {
    throw usageError(
      `${what} ${JSON.stringify(path)} holds characters that the server configuration would read as syntax (spaces, quotes, $, %, {}, ;, #...).`,
      'Use a path made of letters, digits and . _ - / @ + , : = ~ only.',
    );
  }
  return path;
}

const HOST_NAME = /^(?=.{1,253}$)([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*$/;

/** A host name or an IP address, as a server name or a listening address. */
export function hostValue(value: string, what: string): string {
  if (isIP(value) || HOST_NAME.test(value)) return value;
  throw usageError(`${what} "${value}" is not a host name or an IP address.`);
}

/** A name for the exported files, the nginx TLS session cache, the systemd unit and its user. */
export function exportName(value: string): string {
  if (!/^[a-z][a-z0-9_-]{0,30}$/.test(value)) {
    throw usageError(`\`name\` "${value}" must start with a lowercase letter and hold only lowercase letters, digits, - and _ (at most 31).`);
  }
  return value;
}

/** A user name for an htpasswd file or a Caddyfile: no separator, space or syntax of either. */
export function authUserName(value: string): string {
  if (!/^[A-Za-z0-9._@-]{1,64}$/.test(value)) {
    throw usageError(`The user name "${value}" may hold only letters, digits and . _ @ - (at most 64).`);
  }
  return value;
}

/** SERVE_TLS_CIPHERS split as servers take them: OpenSSL's TLS 1.3 suites, its TLS 1.2 list, and the TLS 1.2 suites' IANA names (Go). */
export function tlsSuites(): { tls13: string[]; tls12: string[]; tls12Iana: string[] } {
  const all = SERVE_TLS_CIPHERS.split(':');
  const tls13 = all.filter((s) => s.startsWith('TLS_'));
  const tls12 = all.filter((s) => !s.startsWith('TLS_'));
  const tls12Iana = tls12.map((s) => {
    const name = TLS12_SUITE_IANA_NAMES[s];
    if (!name) throw new Error(`No IANA name known for the TLS 1.2 suite ${s}.`);
    return name;
  });
  return { tls13, tls12, tls12Iana };
}

/** The numeric id of a group from /etc/group, or undefined when this machine has no such group. */
export async function groupId(group: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile('/etc/group', 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const [name, , gid] = line.split(':');
    if (name === group && gid !== undefined && /^\d+$/.test(gid)) return Number(gid);
  }
  return undefined;
}

/** A shell word: quoted only when it needs to be, for commands printed for a person to run. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9._/@+,:=%-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
