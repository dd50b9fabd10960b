import { type DepotUrl, depotFileUrl } from '../../util/depot-url.js';
import { DepotkitError, EXIT } from '../../util/errors.js';
import { NETWORK_LIMITS } from '../../util/limits.js';
import { formatBytes } from '../../util/text.js';
import { isTlsTrustError } from '../../util/tls-errors.js';
import { ProgressWatch } from './progress.js';
import {
  NetAgent,
  type ProxyOptions,
  type ProxyUse,
  type StreamAnswer,
  basicAuthorization,
  chooseProxy,
  discard as discardBody,
  requestStream,
} from '../../net/index.js';
import { describeProxyFailure } from './proxy-failure.js';

/** The upstream depot: where, how it is trusted, the credentials, the time and speed allowed, and the proxy on the way. */
export interface Connection {
  depot: DepotUrl;
  agent: NetAgent;
  authorization?: string;
  timeoutMs: number;
  minBytesPerSecond: number;
  /** The proxy that was named: used, or passed by because the no-proxy list names the depot. */
  proxy?: ProxyUse;
}

export interface ConnectionOptions {
  caPems?: string[];
  user?: string;
  password?: string;
  timeoutMs: number;
  minBytesPerSecond: number;
  concurrency: number;
  proxy?: ProxyOptions;
}

export function openConnection(depot: DepotUrl, options: ConnectionOptions): Connection {
  const { timeoutMs } = options;
  const proxy = chooseProxy(depot, options.proxy);
  // Every connection is verified before a request is written on it: the credentials reach only a server
  // that passes the CA check and the host name check, as the installer's strict client does.
  const tls = {
    trust: { ...(options.caPems?.length ? { caPems: options.caPems } : {}), partialChain: true, minVersion: 'TLSv1.2' as const },
    rejectUnauthorized: true,
  };
  const agent = new NetAgent(
    {
      timeoutMs,
      ...(depot.https ? { tls } : {}),
      ...(proxy.route ? { proxy: { route: proxy.route, ...(options.caPems ? { caPems: options.caPems } : {}) } } : {}),
    },
    options.concurrency + 1,
  );
  return {
    depot,
    timeoutMs,
    minBytesPerSecond: options.minBytesPerSecond,
    ...(options.user !== undefined ? { authorization: basicAuthorization(options.user, options.password ?? '') } : {}),
    agent,
    ...(proxy.use ? { proxy: proxy.use } : {}),
  };
}

/** A new watch of the connection's progress rule, for one file. */
export function watchProgress(conn: Connection): ProgressWatch {
  return new ProgressWatch(conn.timeoutMs, conn.minBytesPerSecond);
}

function describeNetworkError(err: unknown, conn: Connection): Error | undefined {
  // Through a proxy, a failure on the way to it is the proxy's: said before the depot is blamed.
  const proxy = describeProxyFailure(err);
  if (proxy) return proxy;
  const cause = (err as { cause?: NodeJS.ErrnoException }).cause ?? (err as NodeJS.ErrnoException);
  const code = cause?.code;
  if (isTlsTrustError(code)) {
    return new DepotkitError(
      `${conn.depot.base.origin} did not pass the TLS checks (${code}: ${cause.message}); nothing was sent to it.`,
      EXIT.problems,
      code === 'ERR_TLS_CERT_ALTNAME_INVALID'
        ? `Its certificate does not name ${conn.depot.host}: reach it by a name its certificate holds (\`inspectCert\` <certificate> lists them).`
        : 'Give `caPems`: the CA certificate (or CA folder) that issued its certificate, as the installer trusts it.',
    );
  }
  return undefined;
}

export type Answer = StreamAnswer;

/**
 * A GET of a web-root-relative path; a TLS failure or a proxy's refusal is a DepotkitError (no retry helps), a
 * proxy out of reach a ProxyFailure that names it, other network errors are thrown as they are.
 */
export async function get(conn: Connection, path: string, headers: Record<string, string> = {}, watch?: ProgressWatch): Promise<Answer> {
  try {
    return await requestStream(new URL(depotFileUrl(conn.depot, path)), {
      method: 'GET',
      agent: conn.agent,
      ...(watch ? { signal: watch.signal } : {}),
      headers: { ...(conn.authorization ? { authorization: conn.authorization } : {}), ...headers },
      idleMs: conn.timeoutMs,
    });
  } catch (err) {
    watch?.check();
    throw describeNetworkError(err, conn) ?? err;
  }
}

/** Drops an unwanted body: a little is read so the connection can be reused, the rest cuts it. */
export async function discard(res: Answer): Promise<void> {
  await discardBody(res, NETWORK_LIMITS.discardBytes);
}

export function authFailure(conn: Connection, status: number): DepotkitError {
  return new DepotkitError(
    `${conn.depot.base.origin} answered ${status}: ${conn.authorization ? 'the depot user or password was refused' : 'it needs credentials'}.`,
    EXIT.problems,
    conn.authorization ? 'Check `user` and the password file.' : 'Give `user` and `password`.',
  );
}

/** A body longer than what it can be: `declared` when the server said so up front. */
export class TooLarge extends Error {
  constructor(
    readonly limit: number,
    readonly declared?: number,
  ) {
    super(declared !== undefined ? `${declared} bytes announced, more than ${formatBytes(limit)}` : `more than ${formatBytes(limit)} sent`);
  }
}

/**
 * The chunks of an answer's body: at most `max` bytes (more throws TooLarge,
 * and the rest is never read), and within the progress rule of `watch`.
 */
export async function* boundedBody(res: Answer, max: number, watch: ProgressWatch): AsyncGenerator<Buffer> {
  const declared = Number(res.headers['content-length']);
  if (res.headers['content-length'] !== undefined && Number.isFinite(declared) && declared > max) {
    res.body.destroy();
    throw new TooLarge(max, declared);
  }
  const release = watch.guard(res.body);
  let total = 0;
  try {
    for await (const chunk of res.body) {
      const data = chunk as Buffer;
      total += data.length;
      // Leaving the loop destroys the body, and with it the connection.
      if (total > max) throw new TooLarge(max);
      watch.add(data.length);
      yield data;
    }
  } catch (err) {
    // The watch ended the body: its reason, not the stream's.
    if (!(err instanceof TooLarge)) watch.check();
    throw err;
  } finally {
    release();
  }
}
