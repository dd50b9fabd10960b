import { SERVE_AUTH_REALM } from '../constants.js';
import { constantTimeEqual } from '../util/secret-compare.js';
import { clientKey, FailureLimiter, RecentCounts } from './auth-limit.js';
import { createHashPool, HashPoolBusy } from './hash-pool.js';
import { credentialKey, decoyFor, readHtpasswd, userKey, verifyHash, type HtpasswdEntry } from './htpasswd.js';
import { SuccessCache } from './success-cache.js';
import {
  SERVE_AUTH_ASKED_HALF_LIFE_MS,
  SERVE_AUTH_CACHE_ENTRIES,
  SERVE_AUTH_CACHE_MS,
  SERVE_AUTH_FAILURE_BURST,
  SERVE_AUTH_FAILURE_REFILL_MS,
  SERVE_AUTH_HASH_THREADS,
  SERVE_AUTH_MAX_PENDING,
  SERVE_AUTH_TRACKED_CLIENTS,
} from './tuning.js';

/** One user with a password, or an htpasswd file (bcrypt and $apr1$ hashes). */
export type AuthOptions = { user: string; password: string } | { htpasswdFile: string };

/** The challenge sent with every 401. */
export const WWW_AUTHENTICATE = `Basic realm="${SERVE_AUTH_REALM}", charset="UTF-8"`;

export interface Credentials {
  user: string;
  password: string;
}

/**
 * Decodes `Authorization: Basic <base64 of user:password>`; undefined when absent or malformed. Only the
 * canonical base64 of some bytes is taken (padding may be left out): Node's decoder skips what it does
 * not understand, so `<credentials>=x` or `!!!` would otherwise decode to something.
 */
export function parseBasicAuth(header: string | undefined): Credentials | undefined {
  if (!header) return undefined;
  const match = /^[ \t]*basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i.exec(header);
  if (!match) return undefined;
  const token = match[1]!;
  const bytes = Buffer.from(token, 'base64');
  if (bytes.toString('base64').replace(/=+$/, '') !== token.replace(/=+$/, '')) return undefined;
  const decoded = bytes.toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** What a check of the Authorization header came to. */
export type AuthVerdict =
  | { ok: true; user: string }
  /** Missing, malformed or wrong credentials: 401. */
  | { ok: false; status: 401 }
  /** This client failed too often: 429, try again after `retryAfter` seconds. */
  | { ok: false; status: 429; retryAfter: number }
  /** Too many checks in progress on this server: 503, try again after `retryAfter` seconds. */
  | { ok: false; status: 503; retryAfter: number };

export interface AuthLimits {
  /** Wrong passwords a client address may send in a row before it must wait (429). */
  failures?: number;
  /** One more is allowed each time this many milliseconds pass. */
  refillMs?: number;
  /** Threads that compute bcrypt in this process. */
  threads?: number;
  /** bcrypt checks running or waiting at once in this process; more get 503. */
  maxPending?: number;
}

export interface Authenticator {
  /** Checks the credentials sent by the client at `remote` (its address, for the per-client limit). */
  check(header: string | undefined, remote: string | undefined): Promise<AuthVerdict>;
  /** Re-reads an htpasswd file (SIGHUP); a no-op for a single user. */
  reload(): Promise<void>;
  /** Ends the threads that compute bcrypt. */
  close(): Promise<void>;
}

const UNAUTHORIZED: AuthVerdict = { ok: false, status: 401 };

export async function createAuthenticator(options: AuthOptions, limits: AuthLimits = {}): Promise<Authenticator> {
  const limiter = new FailureLimiter({
    burst: limits.failures ?? SERVE_AUTH_FAILURE_BURST,
    refillMs: limits.refillMs ?? SERVE_AUTH_FAILURE_REFILL_MS,
    maxClients: SERVE_AUTH_TRACKED_CLIENTS,
  });
  // The checks each address, and each user name, asked for lately: the queue of bcrypt checks serves first
  // those who asked for fewest, so that a flood from some addresses, or against one user, waits behind
  // everyone else. A count refuses nothing (that would let anyone lock a user out); the limiter refuses.
  const byAddress = new RecentCounts(SERVE_AUTH_ASKED_HALF_LIFE_MS, SERVE_AUTH_TRACKED_CLIENTS);
  const byUser = new RecentCounts(SERVE_AUTH_ASKED_HALF_LIFE_MS, SERVE_AUTH_TRACKED_CLIENTS);
  const verifier = 'htpasswdFile' in options ? await htpasswdVerifier(options.htpasswdFile, limits) : singleUserVerifier(options.user, options.password);
  return {
    async check(header, remote) {
      const given = parseBasicAuth(header);
      // Nothing to verify costs nothing, and is not a failed attempt (clients first ask without credentials).
      if (!given) return UNAUTHORIZED;
      const key = clientKey(remote);
      // The same credentials already being checked (a client's parallel requests before its first answer): that
      // check's answer is this one's, at no cost and with no guess added, so it takes no token. Otherwise a client
      // that opens more connections at once than the burst allows would be refused with the right password.
      const running = verifier.running(given);
      if (running) return verdict(given, await settle(running));
      const user = userKey(given.user);
      // Every request the cache does not answer counts, refused or not: a flood that ignores Retry-After ranks
      // itself last. A user's download, answered from the cache, does not.
      const known = verifier.known(given);
      if (!known) {
        byAddress.add(key);
        byUser.add(user);
      }
      // A client that failed too often waits, whatever it sends now: with right credentials answered while it
      // waits, it could go on guessing at full speed.
      const wait = limiter.take(key);
      if (wait !== undefined) return { ok: false, status: 429, retryAfter: wait };
      let result: boolean | HashPoolBusy = true;
      try {
        if (!known) result = await settle(verifier.verify(given, () => byAddress.get(key) + byUser.get(user)));
      } catch (err) {
        limiter.give(key);
        throw err;
      }
      // A right password gives its token back; a wrong one keeps it, and so does a check turned away for lack of
      // room: refused for free, a flood would retry at once and never use up its budget. The check turned away is
      // always one of the address and user name that asked for most (hash-pool.ts).
      if (result === true) limiter.give(key);
      return verdict(given, result);
    },
    reload: () => verifier.reload(),
    close: () => verifier.close(),
  };
}

/** A check's answer: true or false, or the reason it could not run (the pool of hashing threads is full). */
async function settle(check: Promise<boolean>): Promise<boolean | HashPoolBusy> {
  try {
    return await check;
  } catch (err) {
    if (err instanceof HashPoolBusy) return err;
    throw err;
  }
}

function verdict(given: Credentials, result: boolean | HashPoolBusy): AuthVerdict {
  if (result instanceof HashPoolBusy) return { ok: false, status: 503, retryAfter: 1 };
  return result ? { ok: true, user: given.user } : UNAUTHORIZED;
}

interface Verifier {
  /** Whether these credentials were found right lately (cached): no check to compute. */
  known(given: Credentials): boolean;
  /** `rank` places the check in the queue of bcrypt checks (hash-pool.ts). */
  verify(given: Credentials, rank: () => number): Promise<boolean>;
  /** The check of exactly these credentials under way, if any. */
  running(given: Credentials): Promise<boolean> | undefined;
  reload(): Promise<void>;
  close(): Promise<void>;
}

function singleUserVerifier(user: string, password: string): Verifier {
  return {
    async verify(given) {
      // Both comparisons always run: no early exit tells a wrong user from a wrong password.
      const userOk = constantTimeEqual(given.user, user);
      const passwordOk = constantTimeEqual(given.password, password);
      return userOk && passwordOk;
    },
    // Computed at once: never under way, nothing to remember.
    known: () => false,
    running: () => undefined,
    async reload() {},
    async close() {},
  };
}

interface HtpasswdState {
  users: Map<string, HtpasswdEntry>;
  decoy: Pick<HtpasswdEntry, 'hash' | 'kind'>;
}

async function htpasswdVerifier(file: string, limits: AuthLimits): Promise<Verifier> {
  const pool = createHashPool(limits.threads ?? SERVE_AUTH_HASH_THREADS, limits.maxPending ?? SERVE_AUTH_MAX_PENDING);
  const loadState = async (): Promise<HtpasswdState> => {
    const entries = await readHtpasswd(file);
    return { users: new Map(entries.map((e) => [e.user, e])), decoy: await decoyFor(entries[0]!, pool) };
  };
  let state: HtpasswdState;
  try {
    state = await loadState();
  } catch (err) {
    await pool.close();
    throw err;
  }
  // Successful checks only, so that a download's HEAD, GET and resumed GETs, and a user who logged in before a
  // flood began, skip the queue of bcrypt checks; failures are never cached.
  const cache = new SuccessCache(SERVE_AUTH_CACHE_ENTRIES, SERVE_AUTH_CACHE_MS);
  // Checks under way, by the same key: one bcrypt for a client's parallel requests.
  const running = new Map<string, Promise<boolean>>();
  const compute = async (key: string, given: Credentials, rank: () => number): Promise<boolean> => {
    const entry = state.users.get(given.user);
    // An unknown user costs the same hash as a known one, so timing does not reveal user names.
    const ok = await verifyHash(entry ?? state.decoy, given.password, pool, rank);
    if (!ok || !entry) return false;
    cache.add(key);
    return true;
  };
  return {
    known: (given) => cache.has(credentialKey(given.user, given.password)),
    verify(given, rank) {
      const key = credentialKey(given.user, given.password);
      const check = running.get(key) ?? compute(key, given, rank).finally(() => running.delete(key));
      running.set(key, check);
      return check;
    },
    running: (given) => running.get(credentialKey(given.user, given.password)),
    async reload() {
      state = await loadState();
      cache.clear();
    },
    close: () => pool.close(),
  };
}
