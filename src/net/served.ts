import type { Socket } from 'node:net';
import { type DetailedPeerCertificate, type TLSSocket, checkServerIdentity } from 'node:tls';
import { openConnection } from './connect.js';
import { describeNetworkFailure, networkErrorCode } from './errors.js';

export interface ServedOptions {
  /** The name the server is asked for (SNI) and judged by, when the URL holds another (`--as-host`: an address, say). */
  asHost?: string;
  /** CAs `authorized` is judged against; Node's public roots when absent. */
  ca?: readonly string[];
  /** The TCP connection and the handshake together (10 s by default). */
  timeoutMs?: number;
  /** A TCP connection already open to the server: one round trip less (it is closed with the handshake's). */
  via?: Socket;
  /** Take what an old server offers (TLS 1.0, any cipher), so that the caller can name it instead of failing. */
  lenient?: boolean;
}

/** What the server presents in one TLS handshake that verifies nothing, or why none was had. */
export type Served =
  | {
      ok: true;
      /** Leaf first, as the server sent it, PEM. */
      chainPems: string[];
      /** The leaf's SHA-256, lowercase hex. */
      leafSha256: string;
      protocol: string | null;
      cipher: string;
      /** Does the chain reach `ca` (or a public root)? The name is judged apart, in `identityError`. */
      authorized: boolean;
      authorizationError?: string;
      /** Why the leaf does not name the host (or `asHost`), Node's words; absent when it does. */
      identityError?: string;
    }
  | { ok: false; code?: string; reason: string; /** The failure's own message, as the socket said it. */ message: string };

/** The chain a handshake showed and the protocol it negotiated, for the caller to judge. */
export type ServedChain = Pick<Extract<Served, { ok: true }>, 'chainPems' | 'protocol'>;

/** A certificate in the PEM that node:crypto writes, from the DER the handshake carries. */
function pemOf(der: Buffer): string {
  return `-----BEGIN CERTIFICATE-----\n${der
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END CERTIFICATE-----\n`;
}

function chainOf(socket: TLSSocket): string[] {
  const pems: string[] = [];
  const seen = new Set<string>();
  let peer: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  // Node links a self-signed top to itself: stop at a certificate already read.
  while (peer?.raw && !seen.has(peer.fingerprint256)) {
    seen.add(peer.fingerprint256);
    pems.push(pemOf(peer.raw));
    peer = peer.issuerCertificate;
  }
  return pems;
}

/**
 * The one reader of "which certificate does this server present": a handshake that rejects
 * nothing, so that what the server sends is seen whatever is wrong with it; judging it is the
 * caller's, with src/cert/. `url`'s host is connected to; `asHost` is the name asked for.
 */
export async function servedCertificate(url: URL | string, opts: ServedOptions = {}): Promise<Served> {
  const target = typeof url === 'string' ? new URL(url) : url;
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  const name = opts.asHost ?? host;
  let socket: TLSSocket;
  try {
    socket = (await openConnection(host, Number(target.port || 443), {
      timeoutMs: opts.timeoutMs ?? 10_000,
      ...(opts.via ? { via: opts.via } : {}),
      tls: {
        ...(opts.ca ? { trust: { caPems: opts.ca } } : {}),
        rejectUnauthorized: false,
        serverName: name,
        // `authorized` says whether the chain is trusted; the name is judged below, apart.
        checkServerIdentity: () => undefined,
        ...(opts.lenient ? { lenient: true } : {}),
      },
    })) as TLSSocket;
  } catch (err) {
    const code = networkErrorCode(err);
    return { ok: false, ...(code ? { code } : {}), reason: describeNetworkFailure(code, err), message: err instanceof Error ? err.message : String(err) };
  }
  try {
    const chainPems = chainOf(socket);
    const peer = socket.getPeerCertificate();
    if (chainPems.length === 0 || !peer?.raw) return { ok: false, reason: 'it sent no certificate', message: 'the server sent no certificate' };
    const identity = checkServerIdentity(name, peer);
    return {
      ok: true,
      chainPems,
      // The one spelling of a fingerprint (AB:CD:...), as openssl and the certificate model print it.
      leafSha256: peer.fingerprint256,
      protocol: socket.getProtocol(),
      cipher: socket.getCipher().name,
      authorized: socket.authorized,
      ...(socket.authorizationError ? { authorizationError: String(socket.authorizationError) } : {}),
      ...(identity ? { identityError: identity.message } : {}),
    };
  } finally {
    socket.end();
    socket.destroy();
  }
}

export interface WaitOptions extends Omit<ServedOptions, 'via'> {
  /** How long to wait in all. */
  waitMs: number;
  /** Between two handshakes (250 ms by default). */
  pollMs?: number;
  signal?: AbortSignal;
  /** Told what each handshake showed that was not yet the certificate. */
  onPoll?: (status: WaitStatus) => void;
  /** The caller's words for a handshake that failed (its `reason` by default). */
  words?: (failure: { code?: string; reason: string }) => string;
}

export interface WaitStatus {
  elapsedMs: number;
  polls: number;
  /** What the last handshake showed: `still the old certificate`, or why there was none. */
  last: string;
}

export interface Waited {
  /** Whether the server presented the certificate within the time (false: the time ran out, or the signal came). */
  served: boolean;
  waitedMs: number;
  polls: number;
  /** A handshake failed on the way (the server was restarting). */
  sawRestart: boolean;
  last: string;
  /** What the handshake that presented the certificate showed; absent when `served` is false. */
  shown?: ServedChain;
}

/**
 * Polls the server until it presents the certificate whose SHA-256 is `sha256` (AB:CD:..., or plain hex): after a
 * replacement or a reload the server takes seconds to minutes to serve the new one.
 */
export async function waitUntilServed(url: URL | string, sha256: string, opts: WaitOptions): Promise<Waited> {
  const started = Date.now();
  const pollMs = opts.pollMs ?? 250;
  const want = sha256.replace(/:/g, '').toUpperCase();
  let polls = 0;
  let sawRestart = false;
  for (;;) {
    const served = await servedCertificate(url, { ...opts, timeoutMs: Math.min(opts.timeoutMs ?? 10_000, Math.max(opts.waitMs, 1)) });
    polls++;
    const elapsedMs = Date.now() - started;
    if (served.ok && served.leafSha256.replace(/:/g, '') === want) {
      const shown = { chainPems: served.chainPems, protocol: served.protocol };
      return { served: true, waitedMs: elapsedMs, polls, sawRestart, last: 'the certificate', shown };
    }
    if (!served.ok) sawRestart = true;
    const last = served.ok ? 'still the old certificate' : (opts.words?.(served) ?? served.reason);
    opts.onPoll?.({ elapsedMs, polls, last });
    if (elapsedMs + pollMs > opts.waitMs || opts.signal?.aborted) return { served: false, waitedMs: elapsedMs, polls, sawRestart, last };
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, pollMs);
      opts.signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
}
