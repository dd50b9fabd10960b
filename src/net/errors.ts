/**
 * depotkit's own words for the failures of a request that the socket does not name: a phase that
 * outlived its time, a connection closed before the whole answer, a client already closed. The
 * socket's own codes (ECONNREFUSED, a TLS verification code) are kept as they are.
 */
export const NET_ERRORS = {
  connectTimeout: 'NET_CONNECT_TIMEOUT',
  headersTimeout: 'NET_HEADERS_TIMEOUT',
  bodyTimeout: 'NET_BODY_TIMEOUT',
  closedEarly: 'NET_CLOSED_EARLY',
  clientClosed: 'NET_CLIENT_CLOSED',
} as const;

export type NetErrorCode = (typeof NET_ERRORS)[keyof typeof NET_ERRORS];

/** A failure with one of NET_ERRORS' codes. */
export function netError(code: NetErrorCode, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * The code that says why a request failed: the socket's (ECONNREFUSED, a TLS
 * verification code) rather than a wrapper's (NET_CLOSED_EARLY ...) when a
 * failure carries both through its causes.
 */
export function networkErrorCode(err: unknown): string | undefined {
  let current: unknown = err;
  let ours: string | undefined;
  for (let depth = 0; depth < 4 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (!code.startsWith('NET_')) return code;
      ours ??= code;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return ours;
}

const NETWORK_FAILURES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'the connection was refused',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve',
  ETIMEDOUT: 'the connection timed out',
  ECONNRESET: 'the connection was reset',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  [NET_ERRORS.headersTimeout]: 'the server did not answer in time',
  [NET_ERRORS.bodyTimeout]: 'the server did not send its whole answer in time',
  [NET_ERRORS.connectTimeout]: 'the connection timed out',
  [NET_ERRORS.closedEarly]: 'the server closed the connection before its whole answer',
};

/** What happened, in words and with the failure's code (`the connection was refused (ECONNREFUSED)`). */
export function describeNetworkFailure(code: string | undefined, err: unknown): string {
  const words = (code && NETWORK_FAILURES[code]) ?? (err as { cause?: Error })?.cause?.message ?? (err instanceof Error ? err.message : String(err));
  return code && !words.includes(code) ? `${words} (${code})` : words;
}
