import bcrypt from 'bcryptjs';
import apacheMd5 from 'apache-md5';
import type { ExportTarget } from '../constants.js';
import { readHtpasswd, type HtpasswdEntry } from '../server/htpasswd.js';
import { usageError } from '../util/errors.js';
import { authUserName } from './values.js';

/**
 * bcrypt's work factor for the hashes written here: htpasswd -B's default (5; its -C). Apache checks the
 * hash on every request, HEADs included: at 10, six installers polling a depot every 200 ms kept an Apache
 * core busy (about 60 ms a check); at 5 a check is about 2 ms. Caddy keeps the checks that succeeded (a
 * Caddyfile's basic_auth turns its hash cache on).
 */
const BCRYPT_COST = 5;

export type AuthSource = { user: string; password: string } | { htpasswdFile: string };

export interface UsersPlan {
  /** The file the server reads: written by the export, or the given htpasswd file in place. */
  file: string;
  /** The text to write; undefined when the given htpasswd file is used as it is. */
  text?: string;
  /** A user to name in the printed check command. */
  user: string;
  warnings: string[];
}

/**
 * The hash each server checks. nginx's own code knows $apr1$ whatever the C library (bcrypt
 * depends on crypt(3): glibc's classic one has none); Apache reads both and htpasswd -B writes
 * $2y$; Caddy checks bcrypt only; depotkit serve reads both.
 */
function hashFor(target: ExportTarget, password: string): string {
  if (target === 'nginx') return apacheMd5(password);
  const hash = bcrypt.hashSync(password, BCRYPT_COST);
  // The same algorithm under the prefix Apache's htpasswd writes ($2b$ and $2y$ both mark the fixed one).
  return target === 'caddy' ? hash : hash.replace(/^\$2b\$/, '$2y$');
}

function checkKinds(target: ExportTarget, entries: HtpasswdEntry[], file: string): string[] {
  const bcryptUsers = entries.filter((e) => e.kind === 'bcrypt').map((e) => e.user);
  const apr1Users = entries.filter((e) => e.kind === 'apr1').map((e) => e.user);
  if (target === 'caddy' && apr1Users.length > 0) {
    throw usageError(
      `${file} holds $apr1$ hashes (${apr1Users.join(', ')}); Caddy checks bcrypt only.`,
      'Make the entries with: htpasswd -B <file> <user>, or export with `user` and `passwordFile`.',
    );
  }
  if (target === 'nginx' && bcryptUsers.length > 0) {
    return [
      `${file}: nginx checks bcrypt hashes (${bcryptUsers.join(', ')}) through the C library's crypt(), which has bcrypt on Debian and Ubuntu (libxcrypt) but not everywhere; $apr1$ (htpasswd -m) works with every nginx.`,
    ];
  }
  return [];
}

/** What the server of `target` reads its users from, for a user and password or a given htpasswd file. */
export async function planUsers(target: ExportTarget, auth: AuthSource, writtenFile: string): Promise<UsersPlan> {
  if ('user' in auth) {
    const user = authUserName(auth.user);
    const hash = hashFor(target, auth.password);
    const line = target === 'caddy' ? `${user} ${hash}` : `${user}:${hash}`;
    return { file: writtenFile, text: `${line}\n`, user, warnings: [] };
  }
  const entries = await readHtpasswd(auth.htpasswdFile);
  for (const e of entries) authUserName(e.user);
  const warnings = checkKinds(target, entries, auth.htpasswdFile);
  if (target === 'caddy') {
    // Caddy reads users from its configuration: the entries are copied, in its syntax, to a file the Caddyfile imports.
    return { file: writtenFile, text: entries.map((e) => `${e.user} ${e.hash}\n`).join(''), user: entries[0]!.user, warnings };
  }
  // The given file is read where it is, so users are added or changed there without exporting again.
  return { file: auth.htpasswdFile, user: entries[0]!.user, warnings };
}
