import { createHmac, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import bcrypt from 'bcryptjs';
import apacheMd5 from 'apache-md5';
import { describeFsError, usageError } from '../util/errors.js';
import { constantTimeEqual } from '../util/secret-compare.js';
import type { HashPool } from './hash-pool.js';

/** The hash kinds accepted: bcrypt (`htpasswd -B`) and Apache MD5 (`htpasswd -m`, `openssl passwd -apr1`). */
export type HashKind = 'bcrypt' | 'apr1';

export interface HtpasswdEntry {
  user: string;
  hash: string;
  kind: HashKind;
}

export function hashKind(hash: string): HashKind | undefined {
  if (/^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/.test(hash)) return 'bcrypt';
  if (/^\$apr1\$[^$]{1,8}\$[./A-Za-z0-9]{22}$/.test(hash)) return 'apr1';
  return undefined;
}

/**
 * Parses an htpasswd file. Plain text, crypt(3) and unsalted SHA-1 entries are
 * refused rather than skipped: a user would otherwise be locked out silently.
 */
export function parseHtpasswd(text: string, source: string): HtpasswdEntry[] {
  const entries: HtpasswdEntry[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const colon = trimmed.indexOf(':');
    if (colon <= 0) throw usageError(`${source} line ${index + 1} is not "user:hash".`);
    const user = trimmed.slice(0, colon);
    const hash = trimmed.slice(colon + 1);
    const kind = hashKind(hash);
    if (!kind) {
      throw usageError(
        `${source} line ${index + 1} (user ${user}) has a hash kind that is not accepted; only bcrypt ($2a$, $2b$, $2y$) and $apr1$ are.`,
        'Make the entry with: htpasswd -B <file> <user>  (or: openssl passwd -apr1)',
      );
    }
    entries.push({ user, hash, kind });
  });
  if (entries.length === 0) throw usageError(`${source} has no users.`);
  return entries;
}

export async function readHtpasswd(file: string): Promise<HtpasswdEntry[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw describeFsError(err, file);
  }
  return parseHtpasswd(text, file);
}

/**
 * Checks `password` against an entry; bcrypt runs on `pool` (off the serving thread) when given, placed in its
 * queue by `rank`.
 */
export async function verifyHash(entry: Pick<HtpasswdEntry, 'hash' | 'kind'>, password: string, pool?: HashPool, rank?: () => number): Promise<boolean> {
  if (entry.kind === 'bcrypt') {
    // bcryptjs knows $2a$ and $2b$; $2y$ (PHP, Apache) is the same algorithm under another name.
    const hash = entry.hash.replace(/^\$2y\$/, '$2b$');
    return pool ? pool.compare(password, hash, rank) : bcrypt.compare(password, hash);
  }
  // $apr1$ is a thousand MD5 rounds: a fraction of a millisecond, not worth a thread.
  return constantTimeEqual(apacheMd5(password, entry.hash), entry.hash);
}

/** A hash of the same kind and cost as `like`, to spend the same work on an unknown user. */
export async function decoyFor(like: HtpasswdEntry, pool?: HashPool): Promise<Pick<HtpasswdEntry, 'hash' | 'kind'>> {
  const secret = randomBytes(16).toString('hex');
  if (like.kind === 'bcrypt') {
    const cost = Number(like.hash.slice(4, 6));
    return { kind: 'bcrypt', hash: pool ? await pool.hash(secret, cost) : await bcrypt.hash(secret, cost) };
  }
  return { kind: 'apr1', hash: apacheMd5(secret) };
}

// This process's own key for what it keeps of credentials: an HMAC under it cannot be matched against guesses
// without the key, which never leaves the process.
const PROCESS_KEY = randomBytes(32);

/** The cache key of a successful check: an HMAC, so the cache never holds a password. */
export function credentialKey(user: string, password: string): string {
  // The user's length first: no other split of the same bytes into user and password gives the same key.
  return createHmac('sha256', PROCESS_KEY)
    .update(`credentials ${Buffer.byteLength(user)}:`)
    .update(user)
    .update(password)
    .digest('base64');
}

/** The key of a user name's count of checks: short and fixed in size, whatever name a client sends. */
export function userKey(user: string): string {
  return createHmac('sha256', PROCESS_KEY).update('user:').update(user).digest('base64').slice(0, 22);
}
