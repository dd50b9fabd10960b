import { rootCertificates } from 'node:tls';
import { type Dispatcher, Pool, ProxyAgent, type buildConnector } from 'undici';
import { PROXY_AUTH_REQUIRED } from '../../constants.js';
import { DepotkitError, EXIT } from '../../util/errors.js';
import { describeNetworkFailure, networkErrorCode } from '../../util/http-client.js';
import { isTlsTrustError } from '../../util/tls-errors.js';
import type { ProxyRoute } from './proxy.js';

/**
 * What went wrong between depotkit and the proxy, or the proxy's refusal to
 * open a tunnel (`status`): the proxy's failure, not the depot's. Its message
 * names the proxy as `route.shown`, never with a password.
 */
export class ProxyFailure extends Error {
  constructor(
    readonly route: ProxyRoute,
    /** host:port the tunnel was asked for. */
    readonly target: string,
    readonly failure: { status: number; schemes: string[] } | { cause: unknown },
  ) {
    super(proxyFailureWords(route, target, failure));
    this.name = 'ProxyFailure';
  }
}

function proxyFailureWords(route: ProxyRoute, target: string, failure: ProxyFailure['failure']): string {
  if ('status' in failure) return `the proxy ${route.shown} did not open a connection to ${target}: it answered ${failure.status}`;
  const code = networkErrorCode(failure.cause);
  if (isTlsTrustError(code)) return `the proxy ${route.shown} did not pass the TLS checks (${code})`;
  return `the proxy ${route.shown} could not be reached: ${describeNetworkFailure(code, failure.cause)}`;
}

export interface ProxyAgentSettings {
  /** How the depot's TLS is checked, through the tunnel (as without a proxy). */
  requestTls: buildConnector.BuildOptions;
  /** CAs trusted for an https:// proxy beside Node's public roots. */
  caPems?: string[];
  timeoutMs: number;
  connections: number;
}

/**
 * A dispatcher whose every connection is a tunnel (CONNECT) through the
 * proxy, undici's ProxyAgent; the depot's TLS is checked inside the tunnel as
 * without one. Whatever fails on the way to the proxy, or a CONNECT it
 * refuses, becomes a ProxyFailure.
 */
export function proxyAgent(route: ProxyRoute, settings: ProxyAgentSettings): ProxyAgent {
  const { timeoutMs } = settings;
  return new ProxyAgent({
    uri: route.uri.href,
    ...(route.authorization ? { token: route.authorization } : {}),
    requestTls: settings.requestTls,
    proxyTls: {
      timeout: timeoutMs,
      ...(settings.caPems?.length ? { ca: [...rootCertificates, ...settings.caPems] } : {}),
    },
    clientFactory: (origin: URL, options: object) => proxyLeg(route, origin, { ...options, headersTimeout: timeoutMs, bodyTimeout: timeoutMs }),
    connections: settings.connections,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
}

/**
 * The connections to the proxy itself: each CONNECT that fails, or is answered other than 200, is the proxy's
 * failure. Wrapped here because ProxyAgent's own error carries the proxy's status only in its wording, and
 * passes a failure to reach the proxy on as if it were the depot's.
 */
function proxyLeg(route: ProxyRoute, origin: URL, options: Pool.Options): Dispatcher {
  const pool = new Pool(origin, options);
  const connect = pool.connect.bind(pool) as (o: Dispatcher.ConnectOptions) => Promise<Dispatcher.ConnectData>;
  pool.connect = (async (o: Dispatcher.ConnectOptions) => {
    const target = o.path;
    let data: Dispatcher.ConnectData;
    try {
      data = await connect(o);
    } catch (cause) {
      throw new ProxyFailure(route, target, { cause });
    }
    if (data.statusCode === 200) return data;
    data.socket.on('error', () => undefined).destroy();
    const challenge = data.headers[PROXY_AUTH_REQUIRED.challengeHeader];
    const schemes = (Array.isArray(challenge) ? challenge : challenge ? [challenge] : []).map((c) => c.trim().split(/\s+/)[0]!).filter(Boolean);
    throw new ProxyFailure(route, target, { status: data.statusCode, schemes });
  }) as Pool['connect'];
  return pool;
}

/** The ProxyFailure that `err` is or wraps, if any. */
function findProxyFailure(err: unknown): ProxyFailure | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current; depth++) {
    if (current instanceof ProxyFailure) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * A failure of the proxy in one sentence: a DepotkitError for what no retry
 * helps (the credentials, a tunnel refused, the proxy's TLS), the
 * ProxyFailure itself (its message names the proxy) for what may pass.
 */
export function describeProxyFailure(err: unknown): Error | undefined {
  const failure = findProxyFailure(err);
  if (!failure) return undefined;
  const { route, target } = failure;
  if ('cause' in failure.failure) {
    const code = networkErrorCode(failure.failure.cause);
    if (!isTlsTrustError(code)) return failure;
    return new DepotkitError(
      `The proxy ${route.shown} did not pass the TLS checks (${code}); nothing was sent to it.`,
      EXIT.problems,
      'Give `caPems`: the CA that issued its certificate (an https:// proxy is checked against it and the public roots).',
    );
  }
  const { status, schemes } = failure.failure;
  // tinyproxy answers 401 to wrong credentials (407 to none): either, to a CONNECT, is the proxy's.
  if (PROXY_AUTH_REQUIRED.statuses.includes(status)) return credentialsRefused(route, status, schemes);
  if (status >= 500) return failure;
  return new DepotkitError(
    `The proxy ${route.shown} refused to open a connection to ${target} (it answered ${status}); nothing was sent to the depot.`,
    EXIT.problems,
    'Proxies often open connections to port 443 only: ask its administrators to allow this port, or reach the depot without the proxy (`noProxy`).',
  );
}

function credentialsRefused(route: ProxyRoute, status: number, schemes: string[]): DepotkitError {
  const basic = schemes.length === 0 || schemes.some((s) => s.toLowerCase() === PROXY_AUTH_REQUIRED.basicScheme);
  if (!basic)
    return new DepotkitError(
      `The proxy ${route.shown} asks for ${schemes.join(' or ')} authentication (${status}); depotkit gives a proxy Basic credentials only.`,
      EXIT.problems,
      'Ask its administrators for a Basic account, or reach the depot without the proxy (`noProxy`).',
    );
  return route.user !== undefined
    ? new DepotkitError(
        `The proxy ${route.shown} refused the credentials of ${route.user} (${status}); nothing was sent to the depot.`,
        EXIT.problems,
        route.userFrom === 'proxyUser'
          ? 'Check `proxyUser` and its password file.'
          : `Check the user and password in the proxy's URL (${route.userFrom === 'proxy' ? '`proxy`' : route.userFrom}), or give \`proxyUser\` and \`proxyPassword\`.`,
      )
    : new DepotkitError(
        `The proxy ${route.shown} needs credentials (${status}); nothing was sent to the depot.`,
        EXIT.problems,
        'Give `proxyUser` and `proxyPassword`.',
      );
}
