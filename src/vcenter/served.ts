import { type Served, type WaitStatus, servedCertificate, waitUntilServed } from '../net/index.js';
import { DepotkitError, EXIT } from '../util/errors.js';

/** What one TLS handshake with the server showed. */
export type Handshake =
  { ok: true; sha256: string; certPem: string; authorized: boolean; authorizationError?: string; identityError?: string } | { ok: false; reason: string };

/** A failed handshake in this flow's words: the server restarting is `not listening`. */
function failureWords(failure: { code?: string; reason: string }): string {
  if (failure.code === 'ECONNREFUSED') return 'not listening';
  if (failure.code === 'NET_CONNECT_TIMEOUT') return 'no TLS handshake in time';
  return failure.code ?? failure.reason;
}

function asHandshake(served: Served): Handshake {
  if (!served.ok)
    return { ok: false, reason: served.code === undefined && served.reason === 'it sent no certificate' ? 'no certificate presented' : failureWords(served) };
  // Trusted means the chain and the name, as a client that verifies both finds them.
  const authorizationError = served.authorizationError ?? (served.identityError ? 'ERR_TLS_CERT_ALTNAME_INVALID' : undefined);
  return {
    ok: true,
    sha256: served.leafSha256,
    certPem: served.chainPems[0]!,
    authorized: served.authorized && served.identityError === undefined,
    ...(authorizationError ? { authorizationError } : {}),
    ...(served.identityError ? { identityError: served.identityError } : {}),
  };
}

/**
 * One TLS handshake with the server's origin: the leaf it serves, and (when
 * `caPems` are given) whether it chains to them and matches the host name.
 */
export async function handshake(origin: URL, opts: { caPems?: string[]; timeoutMs?: number } = {}): Promise<Handshake> {
  return asHandshake(await servedCertificate(origin, { ...(opts.caPems ? { ca: opts.caPems } : {}), timeoutMs: opts.timeoutMs ?? 10_000 }));
}

export type { WaitStatus };

/**
 * Waits until the server serves the certificate with SHA-256 `sha256`:
 * after a replacement the server restarts its services, which takes seconds
 * to minutes. Throws when `timeoutMs` passes first.
 */
export async function waitForCertificate(
  origin: URL,
  sha256: string,
  opts: { timeoutMs: number; pollMs?: number; onPoll?: (status: WaitStatus) => void },
): Promise<{ waitedMs: number; polls: number; sawRestart: boolean }> {
  const waited = await waitUntilServed(origin, sha256, {
    waitMs: opts.timeoutMs,
    timeoutMs: Math.min(10_000, opts.timeoutMs),
    ...(opts.pollMs !== undefined ? { pollMs: opts.pollMs } : {}),
    ...(opts.onPoll ? { onPoll: opts.onPoll } : {}),
    words: failureWords,
  });
  if (waited.served) return { waitedMs: waited.waitedMs, polls: waited.polls, sawRestart: waited.sawRestart };
  throw new DepotkitError(
    `${origin.host} did not serve the new certificate within ${(opts.timeoutMs / 1000).toFixed(opts.timeoutMs % 1000 === 0 ? 0 : 1)} s (last: ${waited.last}).`,
    EXIT.problems,
    'The replacement was accepted; the restart may still be running. Check again later with: openssl s_client -connect HOST:PORT',
  );
}
