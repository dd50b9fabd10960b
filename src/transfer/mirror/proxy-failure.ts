import { PROXY_AUTH_REQUIRED } from '../../constants.js';
import { DepotkitError, EXIT } from '../../util/errors.js';
import { isTlsTrustError } from '../../util/tls-errors.js';
import { ProxyFailure, type ProxyRoute, networkErrorCode } from '../../net/index.js';

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
