import { lookup } from 'node:dns/promises';
import { type Socket, connect as netConnect } from 'node:net';
import { type PeerCertificate, connect as tlsConnect } from 'node:tls';
import { readCertificate, sha256Fingerprint } from '../cert/certificate.js';
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
export function tlsSnapshot(depot: DepotUrl, address: string, serverName: string, timeoutMs: number, connection?: Socket): Promise<TlsSnapshot> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({
      host: address,
      port: depot.port,
      socket: connection,
      servername: serverName && !depot.isIp ? serverName : undefined,
      rejectUnauthorized: false,
      // Names are judged by the lint; here `authorized` must only say whether a public root signed it.
      checkServerIdentity: () => undefined,
      // Accept what an old server offers, so that the check can name the version instead of failing.
      minVersion: 'TLSv1',
      ciphers: 'DEFAULT:@SECLEVEL=0',
      ALPNProtocols: ['http/1.1'],
    });
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      reject(new Error(`TLS handshake with ${address}:${depot.port} timed out after ${timeoutMs} ms`));
    });
    socket.once('error', reject);
    socket.once('secureConnect', () => {
      const chainPems: string[] = [];
      let cert: PeerCertificate | undefined = socket.getPeerCertificate(true);
      const seen = new Set<string>();
      while (cert?.raw && !seen.has(sha256Fingerprint(cert.raw))) {
        seen.add(sha256Fingerprint(cert.raw));
        chainPems.push(readCertificate(cert.raw).pem);
        cert = (cert as PeerCertificate & { issuerCertificate?: PeerCertificate }).issuerCertificate;
      }
      const snapshot: TlsSnapshot = {
        protocol: socket.getProtocol(),
        cipher: socket.getCipher().name,
        chainPems,
        publicRoot: socket.authorized,
      };
      socket.end();
      resolve(snapshot);
    });
  });
}
