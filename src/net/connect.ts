import { lookup as dnsLookup, type LookupOptions } from 'node:dns';
import { isIP, connect as tcpConnect, type LookupFunction, type Socket } from 'node:net';
import { type ConnectionOptions, connect as tlsConnect, type PeerCertificate, type TLSSocket } from 'node:tls';
import { NET_ERRORS, netError } from './errors.js';
import { type ProxyRoute } from './proxy.js';
import { tunnel } from './tunnel.js';
import { type Trust, trustOptions } from './trust.js';

/** TLS sessions by server, for resumption: one store per client that may resume (never shared across trust). */
export type TlsSessions = Map<string, Buffer>;

export interface TlsRules {
  trust?: Trust;
  /** Fail the handshake on a certificate `trust` does not vouch for (false: look, and judge elsewhere). */
  rejectUnauthorized: boolean;
  /** The name sent as SNI and checked, when not the host connected to (`--as-host`); none for an address. */
  serverName?: string;
  /** Replaces Node's host name check (a pinned certificate, the installer's SAN-only rule); gets the server name. */
  checkServerIdentity?: (name: string, cert: PeerCertificate) => Error | undefined;
  /** Sessions kept between connections, to resume the previous one's. */
  sessions?: TlsSessions;
  /** What an old server offers is accepted (TLS 1.0, any cipher), so that a check can name it instead of failing. */
  lenient?: boolean;
}

export interface ConnectOptions {
  /** The TCP connection, TLS handshake and proxy tunnel together. */
  timeoutMs: number;
  /** Absent for plain HTTP. */
  tls?: TlsRules;
  /** Host names answered from this map instead of DNS (curl's --resolve). */
  resolve?: ReadonlyMap<string, string>;
  /** Every connection a tunnel (CONNECT) through this proxy; `caPems` are trusted for an https:// proxy beside the public roots. */
  proxy?: { route: ProxyRoute; caPems?: readonly string[] };
  /** A TCP connection already open to the server, taken instead of a new one (closed with the result's). */
  via?: Socket;
}

/** Failures of the connection itself (TCP, tunnel or handshake): reported with their own code and words, never as a cut answer. */
export const connectFailures = new WeakSet<Error>();

/** dns.lookup with the names of `resolve` answered from it, in whichever shape the caller asked for. */
function lookupWith(resolve: ReadonlyMap<string, string>): LookupFunction {
  return ((hostname: string, options: LookupOptions, callback: (...args: unknown[]) => void) => {
    const address = resolve.get(hostname.toLowerCase());
    if (address === undefined) return void dnsLookup(hostname, options, callback as never);
    const family = isIP(address);
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as LookupFunction;
}

function tcp(host: string, port: number, resolve?: ReadonlyMap<string, string>): Promise<Socket> {
  return new Promise((done, fail) => {
    const socket = tcpConnect({ host, port, ...(resolve?.size ? { lookup: lookupWith(resolve) } : {}) });
    socket.once('error', fail).once('connect', () => {
      socket.off('error', fail);
      done(socket);
    });
  });
}

function handshake(socket: Socket, host: string, port: number, rules: TlsRules): Promise<TLSSocket> {
  const name = rules.serverName ?? host;
  const sessionKey = `${host}:${port}:${name}`;
  const session = rules.sessions?.get(sessionKey);
  const options: ConnectionOptions = {
    socket,
    host: name,
    // No server name for an address: SNI carries host names only.
    ...(isIP(name) === 0 ? { servername: name } : {}),
    // The versions and ciphers taken are the context's: a lenient look builds (and caches) a context of its own.
    ...trustOptions(rules.lenient ? { ...rules.trust, minVersion: 'TLSv1', ciphers: 'DEFAULT:@SECLEVEL=0' } : rules.trust),
    rejectUnauthorized: rules.rejectUnauthorized,
    ...(rules.checkServerIdentity ? { checkServerIdentity: rules.checkServerIdentity } : {}),
    ...(session ? { session } : {}),
    ...(rules.lenient ? { ALPNProtocols: ['http/1.1'] } : {}),
  };
  return new Promise((done, fail) => {
    const secure = tlsConnect(options);
    if (rules.sessions) secure.on('session', (s: Buffer) => rules.sessions!.set(sessionKey, s));
    secure.once('error', fail).once('secureConnect', () => {
      secure.off('error', fail);
      done(secure);
    });
  });
}

/**
 * A connection to `host:port` ready for a request: TCP first (or a tunnel through the proxy), TLS
 * once it stands, all within `timeoutMs`. Building the TLS socket (and its OpenSSL state) before the
 * TCP connect was most of the cost of each refused connection over a fleet where most consumers are
 * down. The errors are the socket's (ECONNREFUSED, a TLS verification code), the proxy's
 * (ProxyFailure) or NET_CONNECT_TIMEOUT.
 */
export async function openConnection(host: string, port: number, opts: ConnectOptions): Promise<Socket> {
  let current: Socket | undefined;
  let timer: NodeJS.Timeout | undefined;
  let late = false;
  // A step that ends after the deadline closes what it opened: nobody waits for it any more.
  const stand = <T extends Socket>(socket: T): T => {
    current = socket;
    if (late) socket.destroy();
    return socket;
  };
  const steps = async (): Promise<Socket> => {
    const open = stand(opts.via ?? (opts.proxy ? await tunnel(opts.proxy.route, host, port, opts.proxy.caPems, stand) : await tcp(host, port, opts.resolve)));
    return opts.tls ? stand(await handshake(open, host, port, opts.tls)) : open;
  };
  const deadline = new Promise<never>((_, fail) => {
    timer = setTimeout(() => {
      late = true;
      fail(netError(NET_ERRORS.connectTimeout, `no connection to ${host}:${port} within ${opts.timeoutMs} ms`));
    }, opts.timeoutMs);
  });
  try {
    return await Promise.race([steps(), deadline]);
  } catch (err) {
    current?.destroy();
    if (err instanceof Error) connectFailures.add(err);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
