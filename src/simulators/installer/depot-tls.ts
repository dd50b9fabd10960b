import { isIP } from 'node:net';
import { INSTALLER_TLS_MESSAGES } from '../../constants.js';
import { readCertificate } from '../../cert/index.js';
import { NET_ERRORS, NetAgent, type StreamAnswer, type TlsSessions, requestStream } from '../../net/index.js';

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
function strictIdentity(host: string, peer: { raw: Buffer }): Error | undefined {
  const cert = readCertificate(peer.raw);
  let detail: string | undefined;
  if (!cert.extensions.some((e) => e.name === 'subjectAltName')) detail = INSTALLER_TLS_MESSAGES.noSan;
  else if (!cert.coversHost(host)) detail = isIP(host) ? INSTALLER_TLS_MESSAGES.ipMismatch(host) : INSTALLER_TLS_MESSAGES.dnsMismatch(host);
  return detail === undefined ? undefined : Object.assign(new Error(detail), { code: NAME_ERROR });
}

/**
 * One simulated installer's TLS client to its depot, kept between connections as the installer's
 * Java client keeps its SSL context: a connection resumes the TLS session of the previous one to
 * the same depot (a validation, then the sync), as Java's client session cache does. Each simulator
 * has its own, so no session passes between installers; its sessions are dropped when the depot or
 * the trusted certificates change, so that no session outlives the trust it was checked with.
 */
export class DepotTlsClient {
  private current?: { key: string; sessions: TlsSessions };

  sessions(target: DepotTarget, trustedPems: string[], opts: Omit<DepotConnectOptions, 'tls'>): TlsSessions {
    const key = JSON.stringify([target.https, target.host, target.port, trustedPems, opts.timeoutMs, [...(opts.resolve ?? [])]]);
    if (this.current?.key !== key) this.current = { key, sessions: new Map() };
    return this.current.sessions;
  }
}

/** The connection an operation holds to the depot, and the time each step of a request has. */
export class DepotAgent extends NetAgent {
  /** Has it carried a request? Only a reused connection can have gone stale. */
  used = false;

  constructor(
    target: DepotTarget,
    trustedPems: string[],
    readonly opts: DepotConnectOptions,
  ) {
    const tls = {
      // Java's PKIX trust manager takes any certificate of the store as an anchor, a CA or the depot's own.
      trust: { caPems: trustedPems, partialChain: true, minVersion: 'TLSv1.2' as const },
      rejectUnauthorized: true,
      checkServerIdentity: strictIdentity,
      sessions: opts.tls.sessions(target, trustedPems, opts),
    };
    super({ timeoutMs: opts.timeoutMs, ...(target.https ? { tls } : {}), ...(opts.resolve?.size ? { resolve: opts.resolve } : {}) }, 1);
  }
}

/**
 * The connection an operation of the installer (a validation, a sync, a bundle's download) holds to
 * the depot: one kept-alive connection for its successive requests, as Java's HTTP client keeps
 * one, over the installer's TLS client.
 */
export function depotAgent(target: DepotTarget, trustedPems: string[], opts: DepotConnectOptions): DepotAgent {
  return new DepotAgent(target, trustedPems, opts);
}

/** A connection the server closed before any byte of its answer. */
const CLOSED_BEFORE_ANSWER = new Set<string>([NET_ERRORS.closedEarly, 'ECONNRESET']);

/**
 * A GET or HEAD of the depot on the operation's kept-alive connection, sent once more (on a new connection)
 * when the server closed that connection, reused, before answering: a web server reloading closes its idle
 * kept-alive connections (nginx's old workers do), and the installer's Java HTTP client resends an idempotent
 * request then. A first request that fails so fails.
 */
export async function depotRequest(
  url: string,
  options: { method: 'GET' | 'HEAD'; headers: Record<string, string>; agent: DepotAgent; signal?: AbortSignal },
): Promise<StreamAnswer> {
  const again = options.agent.used;
  options.agent.used = true;
  const send = () => requestStream(new URL(url), { ...options, idleMs: options.agent.opts.timeoutMs });
  try {
    return await send();
  } catch (err) {
    if (!again || !CLOSED_BEFORE_ANSWER.has((err as { code?: string }).code ?? '')) throw err;
    return send();
  }
}
