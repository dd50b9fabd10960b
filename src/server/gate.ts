import type { IncomingMessage, ServerResponse } from 'node:http';
import { WWW_AUTHENTICATE, type Authenticator } from './auth.js';
import type { ServeMetrics } from './metrics.js';
import type { PageRoute } from './pages.js';
import { isUnderPrefix, locateInsideRoot } from './paths.js';
import { sendStatus } from './short-answer.js';

/** What decides whether a request needs credentials. */
export interface Gate {
  /** The web root, already a realpath. */
  realRoot: string;
  auth?: Authenticator;
  /** Root-relative prefixes (normalised, whole segments) served without auth. */
  openPrefixes: readonly string[];
  /** /metrics without credentials. */
  metricsOpen: boolean;
  metrics?: ServeMetrics;
}

/** Where a request lands inside the root (see locateInsideRoot). */
export interface Located {
  real?: string;
  rel?: string;
}

/** A request let through: its user when it gave credentials, and where it lands when that was looked up to decide. */
export interface Admission {
  user?: string;
  located?: Located;
}

/**
 * Lets a request through, or answers it (401, 429, 503) and returns undefined. `remote` is the client's
 * address, whose failures are counted.
 */
export async function admit(
  gate: Gate,
  req: IncomingMessage,
  res: ServerResponse,
  segments: string[],
  page: PageRoute | undefined,
  remote: string | undefined,
): Promise<Admission | undefined> {
  if (!gate.auth || (page === 'metrics' && gate.metricsOpen)) return {};
  let located: Located | undefined;
  // Where the request lands decides, never how it is spelt: a symlink under an open prefix that points
  // into the protected tree stays protected. Without open prefixes nothing is looked up before the credentials.
  if (page === undefined && gate.openPrefixes.length > 0) located = await locateInsideRoot(gate.realRoot, segments, true);
  const rel = located?.rel;
  if (page === undefined && rel !== undefined && gate.openPrefixes.some((p) => isUnderPrefix(rel, p))) return { located };
  const verdict = await gate.auth.check(req.headers.authorization, remote);
  if (verdict.ok) return { user: verdict.user, located };
  if (verdict.status === 401) {
    gate.metrics?.authFailure(req.headers.authorization === undefined ? 'missing' : 'rejected');
    sendStatus(res, 401, { 'WWW-Authenticate': WWW_AUTHENTICATE });
    return undefined;
  }
  gate.metrics?.authFailure(verdict.status === 429 ? 'rate_limited' : 'busy');
  sendStatus(res, verdict.status, { 'Retry-After': String(verdict.retryAfter) });
  return undefined;
}
