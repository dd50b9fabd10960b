import { lookup, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { createSecureContext, type PeerCertificate, type SecureContext } from 'node:tls';
import { Agent, buildConnector, type Dispatcher, request } from 'undici';
import { INSTALLER_TLS_MESSAGES } from '../../constants.js';
import { readCertificate } from '../../cert/index.js';

/** Where the installer looks for the depot: the folder that contains PROD/. */
export interface DepotTarget {
  https: boolean;
  host: string;
  port: number;
  /** '' or a path prefix such as '/depot', without a trailing slash. */
  prefix: string;
}

export interface DepotConnectOptions {
  /** Timeout of each step (connect, headers, body). */
  timeoutMs: number;
  /** Host names resolved to these addresses instead of through DNS (curl's --resolve). */
  resolve?: ReadonlyMap<string, string>;
  /** The simulated installer's TLS client, kept between its connections to the depot. */
  tls: DepotTlsClient;
}

export const NAME_ERROR = 'DEPOTKIT_STRICT_HOSTNAME';

/**
 * The installer's (Java) host name check: the name must be in the SAN (a DNS
 * entry for a name, an IP entry for an address); the CN is never consulted
 * and a certificate without SAN fails.
 */
function strictIdentity(host: string, peer: PeerCertificate): Error | undefined {
  const cert = readCertificate(peer.raw);
  let detail: string | undefined;
  if (!cert.extensions.some((e) => e.name === 'subjectAltName')) detail = INSTALLER_TLS_MESSAGES.noSan;
  else if (!cert.coversHost(host)) detail = isIP(host) ? INSTALLER_TLS_MESSAGES.ipMismatch(host) : INSTALLER_TLS_MESSAGES.dnsMismatch(host);
  return detail === undefined ? undefined : Object.assign(new Error(detail), { code: NAME_ERROR });
}

/** dns.lookup with the names of `resolve` answered from it, in whichever shape the caller asked for. */
function lookupWith(resolve: ReadonlyMap<string, string>): LookupFunction {
  return ((hostname: string, options: LookupOptions, callback: (...args: unknown[]) => void) => {
    const address = resolve.get(hostname.toLowerCase());
    if (address === undefined) {
      lookup(hostname, options, callback as never);
      return;
    }
    const family = isIP(address);
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as LookupFunction;
}

/** Trust stores seen, each built once: simulated installers trusting the same certificates share it (it holds no session). */
const secureContexts = new Map<string, SecureContext>();
const MAX_SECURE_CONTEXTS = 64;

/**
 * The TLS rules of the installer's Java client: TLS 1.2 or later, trusting only `trustedPems`, each
 * of them a trust anchor whether it is a CA or the depot's own certificate (Java's PKIX trust manager
 * accepts a server whose leaf is in the store). Certificates that make no store are passed as they
 * are, so that the connection fails as it would have, with their error.
 */
function trustOptions(trustedPems: string[]): { secureContext: SecureContext } | { ca: string[]; allowPartialTrustChain: true; minVersion: 'TLSv1.2' } {
  const rules = { ca: trustedPems, allowPartialTrustChain: true, minVersion: 'TLSv1.2' } as const;
  const key = trustedPems.join('\n');
  let context = secureContexts.get(key);
  if (!context) {
    try {
      context = createSecureContext(rules);
    } catch {
      return rules;
    }
    if (secureContexts.size >= MAX_SECURE_CONTEXTS) secureContexts.clear();
    secureContexts.set(key, context);
  }
  return { secureContext: context };
}

/**
 * One simulated installer's TLS client to its depot, kept between connections as the installer's
 * Java client keeps its SSL context: a connection resumes the TLS session of the previous one to
 * the same depot (a validation, then the sync), as Java's client session cache does. Each simulator
 * has its own, so no session passes between installers; it is made anew when the depot or the
 * trusted certificates change, so that no session outlives the trust it was checked with.
 */
export class DepotTlsClient {
  private current?: { key: string; connect: buildConnector.connector };

  connector(target: DepotTarget, trustedPems: string[], opts: Omit<DepotConnectOptions, 'tls'>): buildConnector.connector {
    const key = JSON.stringify([target.https, target.host, target.port, trustedPems, opts.timeoutMs, [...(opts.resolve ?? [])]]);
    if (this.current?.key !== key) this.current = { key, connect: buildConnector(connectOptions(target, trustedPems, opts)) };
    return this.current.connect;
  }
}

function connectOptions(target: DepotTarget, trustedPems: string[], opts: Omit<DepotConnectOptions, 'tls'>): buildConnector.BuildOptions {
  const resolve = opts.resolve && opts.resolve.size > 0 ? { lookup: lookupWith(opts.resolve) } : {};
  if (!target.https) return { timeout: opts.timeoutMs, ...resolve };
  return {
    ...trustOptions(trustedPems),
    rejectUnauthorized: true,
    servername: isIP(target.host) ? undefined : target.host,
    checkServerIdentity: strictIdentity,
    timeout: opts.timeoutMs,
    ...resolve,
  };
}

/**
 * The connection an operation of the installer (a validation, a sync, a bundle's download) holds to
 * the depot: one kept-alive connection for its successive requests, as Java's HTTP client keeps
 * one, over the installer's TLS client.
 */
export function depotAgent(target: DepotTarget, trustedPems: string[], opts: DepotConnectOptions): Agent {
  return new Agent({
    connect: opts.tls.connector(target, trustedPems, opts),
    connections: 1,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
  });
}

/** undici's words for a connection the server closed before any byte of its answer. */
const CLOSED_BEFORE_ANSWER = new Set(['UND_ERR_SOCKET', 'ECONNRESET']);
/** Operations' connections that have carried a request: only a reused connection can have gone stale. */
const reused = new WeakSet<Agent>();

/**
 * A GET or HEAD of the depot on the operation's kept-alive connection, sent once more (on a new connection)
 * when the server closed that connection, reused, before answering: a web server reloading closes its idle
 * kept-alive connections (nginx's old workers do), and the installer's Java HTTP client resends an idempotent
 * request then. A first request that fails so fails.
 */
export async function depotRequest(
  url: string,
  options: { method: 'GET' | 'HEAD'; headers: Record<string, string>; dispatcher: Agent; reset?: boolean },
): Promise<Dispatcher.ResponseData> {
  const again = reused.has(options.dispatcher);
  reused.add(options.dispatcher);
  try {
    return await request(url, options);
  } catch (err) {
    if (!again || !CLOSED_BEFORE_ANSWER.has((err as { code?: string }).code ?? '')) throw err;
    return request(url, options);
  }
}
