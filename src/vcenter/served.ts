import { isIP } from 'node:net';
import { checkServerIdentity, connect, type PeerCertificate } from 'node:tls';
import { readCertificate, sha256Fingerprint } from '../cert/certificate.js';
import { DepotkitError, EXIT } from '../util/errors.js';
import { hostOf } from '../util/url.js';

/** What one TLS handshake with the server showed. */
export type Handshake =
  { ok: true; sha256: string; certPem: string; authorized: boolean; authorizationError?: string; identityError?: string } | { ok: false; reason: string };

/**
 * One TLS handshake with the server's origin: the leaf it serves, and (when
 * `caPems` are given) whether it chains to them and matches the host name.
 */
export function handshake(origin: URL, opts: { caPems?: string[]; timeoutMs?: number } = {}): Promise<Handshake> {
  const host = hostOf(origin);
  return new Promise((resolve) => {
    const socket = connect({
      host,
      port: Number(origin.port || 443),
      ...(isIP(host) === 0 ? { servername: host } : {}),
      ca: opts.caPems,
      rejectUnauthorized: false,
    });
    const finish = (result: Handshake) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(opts.timeoutMs ?? 10_000, () => finish({ ok: false, reason: 'no TLS handshake in time' }));
    socket.once('error', (err: NodeJS.ErrnoException) =>
      finish({ ok: false, reason: err.code === 'ECONNREFUSED' ? 'not listening' : (err.code ?? err.message) }),
    );
    socket.once('secureConnect', () => {
      const peer: PeerCertificate = socket.getPeerCertificate();
      if (!peer?.raw) return finish({ ok: false, reason: 'no certificate presented' });
      const identity = checkServerIdentity(host, peer);
      finish({
        ok: true,
        sha256: sha256Fingerprint(peer.raw),
        certPem: readCertificate(peer.raw).pem,
        authorized: socket.authorized,
        ...(socket.authorizationError ? { authorizationError: String(socket.authorizationError) } : {}),
        ...(identity ? { identityError: identity.message } : {}),
      });
    });
  });
}

export interface WaitStatus {
  elapsedMs: number;
  polls: number;
  /** What the last handshake showed: `not listening`, `old certificate`, ... */
  last: string;
}

/**
 * Polls the server until it serves the certificate with SHA-256 `sha256`:
 * after a replacement the server restarts its services, which takes seconds
 * to minutes. Throws when `timeoutMs` passes first.
 */
export async function waitForCertificate(
  origin: URL,
  sha256: string,
  opts: { timeoutMs: number; pollMs?: number; onPoll?: (status: WaitStatus) => void },
): Promise<{ waitedMs: number; polls: number; sawRestart: boolean }> {
  const started = Date.now();
  const pollMs = opts.pollMs ?? 250;
  let polls = 0;
  let sawRestart = false;
  for (;;) {
    const shake = await handshake(origin, { timeoutMs: Math.min(10_000, opts.timeoutMs) });
    polls++;
    if (shake.ok && shake.sha256 === sha256) return { waitedMs: Date.now() - started, polls, sawRestart };
    if (!shake.ok) sawRestart = true;
    const status: WaitStatus = { elapsedMs: Date.now() - started, polls, last: shake.ok ? 'still the old certificate' : shake.reason };
    opts.onPoll?.(status);
    if (status.elapsedMs + pollMs > opts.timeoutMs) {
      throw new DepotkitError(
        `${origin.host} did not serve the new certificate within ${(opts.timeoutMs / 1000).toFixed(opts.timeoutMs % 1000 === 0 ? 0 : 1)} s (last: ${status.last}).`,
        EXIT.problems,
        'The replacement was accepted; the restart may still be running. Check again later with: openssl s_client -connect HOST:PORT',
      );
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
