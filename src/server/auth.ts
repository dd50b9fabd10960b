import { SERVE_AUTH_CACHE_MS, SERVE_AUTH_REALM } from '../constants.js';
import { constantTimeEqual } from '../util/secret-compare.js';
import { credentialKey, decoyFor, readHtpasswd, verifyHash, type HtpasswdEntry } from './htpasswd.js';

/** One user with a password, or an htpasswd file (bcrypt and $apr1$ hashes). */
export type AuthOptions = { user: string; password: string } | { htpasswdFile: string };

/** The challenge sent with every 401. */
export const WWW_AUTHENTICATE = `Basic realm="${SERVE_AUTH_REALM}", charset="UTF-8"`;

export interface Credentials {
  user: string;
  password: string;
}

/** Decodes `Authorization: Basic ...`; undefined when absent or malformed. */
export function parseBasicAuth(header: string | undefined): Credentials | undefined {
  if (!header) return undefined;
  const match = /^\s*basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export interface Authenticator {
  /** The user name when the credentials are right, undefined otherwise. */
  check(header: string | undefined): Promise<string | undefined>;
  /** Re-reads an htpasswd file (SIGHUP); a no-op for a single user. */
  reload(): Promise<void>;
}

export async function createAuthenticator(options: AuthOptions): Promise<Authenticator> {
  if ('htpasswdFile' in options) return createHtpasswdAuthenticator(options.htpasswdFile);
  const { user, password } = options;
  return {
    async check(header) {
      const given = parseBasicAuth(header);
      if (!given) return undefined;
      // Both comparisons always run: no early exit tells a wrong user from a wrong password.
      const userOk = constantTimeEqual(given.user, user);
      const passwordOk = constantTimeEqual(given.password, password);
      return userOk && passwordOk ? given.user : undefined;
    },
    async reload() {},
  };
}

interface HtpasswdState {
  users: Map<string, HtpasswdEntry>;
  decoy: Pick<HtpasswdEntry, 'hash' | 'kind'>;
}

async function loadState(file: string): Promise<HtpasswdState> {
  const entries = await readHtpasswd(file);
  return { users: new Map(entries.map((e) => [e.user, e])), decoy: decoyFor(entries[0]!) };
}

async function createHtpasswdAuthenticator(file: string): Promise<Authenticator> {
  let state = await loadState(file);
  // Successful checks only, keyed by a hash of user and password, so a download's HEAD, GET and
  // resumed GETs do not each pay for bcrypt; failures are never cached.
  const cache = new Map<string, number>();
  const MAX_CACHE = 1024;
  return {
    async check(header) {
      const given = parseBasicAuth(header);
      if (!given) return undefined;
      const key = credentialKey(given.user, given.password);
      const now = Date.now();
      const until = cache.get(key);
      if (until !== undefined && until > now) return given.user;
      const entry = state.users.get(given.user);
      // An unknown user costs the same hash as a known one, so timing does not reveal user names.
      const ok = await verifyHash(entry ?? state.decoy, given.password);
      if (!ok || !entry) return undefined;
      if (cache.size >= MAX_CACHE) cache.clear();
      cache.set(key, now + SERVE_AUTH_CACHE_MS);
      return given.user;
    },
    async reload() {
      state = await loadState(file);
      cache.clear();
    },
  };
}
