import { lookup } from 'node:dns/promises';
import { type Socket, connect as netConnect, isIP } from 'node:net';
import { NET_ERRORS, servedCertificate } from '../net/index.js';
import type { DepotUrl } from '../util/depot-url.js';

export type ConnectOutcome =
  { ok: true; address: string; socket: Socket } | { ok: false; reason: 'unknown-host' | 'refused' | 'timeout' | 'unreachable'; detail: string };

/**
 * Resolves the host and opens a TCP connection, as the installer's first step; a connection that opens is the
 * caller's, for its first handshake (one connection fewer, and on a far server one round trip less).
 */
export async function resolveAndConnect(depot: DepotUrl, timeoutMs: number): Promise<ConnectOutcome> {
  let address = depot.host;
  if (!depot.isIp) {
    try {
      address = (await lookup(depot.host)).address;
    } catch (err) {
      return { ok: false, reason: 'unknown-host', detail: (err as NodeJS.ErrnoException).code ?? (err as Error).message };
    }
  }
  return new Promise((resolve) => {
    const socket = netConnect({ host: address, port: depot.port });
    const fail = (outcome: ConnectOutcome) => {
      socket.destroy();
      resolve(outcome);
    };
    const onError = (err: NodeJS.ErrnoException) =>
      fail({ ok: false, reason: err.code === 'ECONNREFUSED' ? 'refused' : 'unreachable', detail: `${err.code ?? ''} ${err.message}`.trim() });
    socket.setTimeout(timeoutMs, () => fail({ ok: false, reason: 'timeout', detail: `no answer from ${address}:${depot.port} within ${timeoutMs} ms` }));
    socket.once('error', onError);
    socket.once('connect', () => {
      socket.setTimeout(0);
      socket.off('error', onError);
      resolve({ ok: true, address, socket });
    });
  });
}

export interface TlsSnapshot {
  protocol: string | null;
  cipher: string;
  /** Leaf first, as the server sent it, PEM. */
  chainPems: string[];
  /** Chains to a root of Node's public store? (Only used to tell the user.) */
  publicRoot: boolean;
}

/**
 * Handshakes without rejecting, to see what the server presents; judging
 * trust and names is left to the certificate lint, against the given CA only.
 * On `connection` when given (it is closed with the handshake's), else on one of its own.
 */
export async function tlsSnapshot(depot: DepotUrl, address: string, serverName: string, timeoutMs: number, connection?: Socket): Promise<TlsSnapshot> {
  const at = new URL(`https://${isIP(address) === 6 ? `[${address}]` : address}:${depot.port}`);
  const served = await servedCertificate(at, {
    ...(serverName && !depot.isIp ? { asHost: serverName } : {}),
    timeoutMs,
    ...(connection ? { via: connection } : {}),
    // Accept what an old server offers, so that the check can name the version instead of failing.
    lenient: true,
  });
  if (served.ok) return { protocol: served.protocol, cipher: served.cipher, chainPems: served.chainPems, publicRoot: served.authorized };
  if (served.code === NET_ERRORS.connectTimeout) throw new Error(`TLS handshake with ${address}:${depot.port} timed out after ${timeoutMs} ms`);
  throw new Error(served.message);
}
