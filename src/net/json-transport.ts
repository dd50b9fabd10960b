import { DepotkitError, EXIT } from '../util/errors.js';
import { NETWORK_LIMITS } from '../util/limits.js';
import { formatBytes } from '../util/text.js';
import { NET_ERRORS, netError, networkErrorCode } from './errors.js';
import { NetAgent, requestText } from './request.js';

/** An answer: its status and its body, parsed as JSON when it is JSON, else the text (undefined when empty). */
export interface Reply {
  status: number;
  body: unknown;
}

/**
 * Failures before the request reached the server: any method may be sent again
 * after these. A refused connection is not among them: the host answered that
 * nothing listens there, which the back-off would only confirm 1.75 s later for
 * every stopped consumer of a fleet; it fails at once.
 */
const CONNECT_PHASE_CODES = new Set<string>([NET_ERRORS.connectTimeout, 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Network failures worth another attempt for GET and DELETE, which are idempotent; TLS verification failures are not among them. */
const RETRYABLE_CODES = new Set([
  ...CONNECT_PHASE_CODES,
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  NET_ERRORS.closedEarly,
  NET_ERRORS.headersTimeout,
  NET_ERRORS.bodyTimeout,
  NET_ERRORS.clientClosed,
]);

export interface JsonTransportOptions {
  /** `https://host[:port]`: paths are resolved against it. */
  origin: URL;
  /** CA certificates (PEM) to verify the server with, the system store when absent; or no verification at all. */
  trust?: { caPems?: string[]; insecure?: boolean };
  /** The time each request has, from its start to the answer's last byte (each attempt, when it is retried). */
  timeoutMs: number;
  /** Attempts after the first, with back-off (0 by default). */
  retries?: number;
  /** First back-off; it doubles at each attempt (250 ms by default). */
  backoffMs?: number;
  /** The error for a request that got no answer: one sentence, with what to do about it. */
  connectionError(err: unknown, code: string | undefined): Error;
  /** Who answers, for messages: `the installer`, `the management server`. */
  serverName?: string;
  /** Bytes of one answer's body read at most (NETWORK_LIMITS.apiAnswerBytes by default). */
  maxAnswerBytes?: number;
}

/** A server sent a longer answer than its API ever does: the rest was not read. */
export class AnswerTooLargeError extends DepotkitError {
  constructor(
    readonly host: string,
    readonly limit: number,
    message: string,
  ) {
    super(message, EXIT.problems, 'Check that the URL is the right server: a proxy or another service may answer there.');
    this.name = 'AnswerTooLargeError';
  }
}

export interface SendOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** The time this request has, instead of the transport's. */
  timeoutMs?: number;
  signal?: AbortSignal;
  retries?: number;
}

/**
 * JSON over HTTPS to one server, for the API clients: a connection pool with
 * the caller's trust, JSON bodies both ways, and retries with back-off on
 * network errors and 5xx answers only. POST, PUT and PATCH change state: they
 * are sent again only when the first attempt never reached the server
 * (connect-phase errors) or it answered 503 (not processed); after a timeout
 * or a reset mid-request the server may have acted on it, so they fail.
 */
export class JsonTransport {
  readonly stats = { requests: 0, retries: 0 };
  private readonly agent: NetAgent;
  /** Requests under way: close() waits for them, as a pool's close does. */
  private readonly pending = new Set<Promise<unknown>>();
  private closed = false;

  constructor(private readonly opts: JsonTransportOptions) {
    this.agent = new NetAgent({
      timeoutMs: opts.timeoutMs,
      tls: { ...(opts.trust?.caPems ? { trust: { caPems: opts.trust.caPems } } : {}), rejectUnauthorized: !opts.trust?.insecure },
    });
  }

  async send(method: string, path: string, opts: SendOptions = {}): Promise<Reply> {
    const retries = opts.retries ?? this.opts.retries ?? 0;
    const idempotent = method === 'GET' || method === 'DELETE' || method === 'HEAD';
    const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const url = new URL(path, this.opts.origin);
    for (let attempt = 0; ; attempt++) {
      let reply: Reply | undefined;
      let failure: unknown;
      try {
        this.stats.requests++;
        const answer = await this.track(() =>
          requestText(url, {
            method,
            headers,
            body: payload,
            agent: this.agent,
            timeoutMs: opts.timeoutMs ?? this.opts.timeoutMs,
            maxBytes: this.maxAnswerBytes,
            ...(opts.signal ? { signal: opts.signal } : {}),
          }),
        );
        if (answer.text === undefined) throw this.tooLarge(method, path);
        reply = { status: answer.status, body: parseBody(answer.text) };
      } catch (err) {
        if (err instanceof AnswerTooLargeError) throw err;
        failure = err;
      }
      const code = networkErrorCode(failure) ?? '';
      const retryable = reply ? (idempotent ? reply.status >= 500 : reply.status === 503) : (idempotent ? RETRYABLE_CODES : CONNECT_PHASE_CODES).has(code);
      if (!retryable || attempt >= retries) {
        if (reply) return reply;
        throw this.opts.connectionError(failure, code || undefined);
      }
      this.stats.retries++;
      await new Promise((resolve) => setTimeout(resolve, (this.opts.backoffMs ?? 250) * 2 ** attempt));
    }
  }

  /** Waits for the requests under way, then closes the connections; a request sent after fails with NET_CLIENT_CLOSED. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.pending]);
    this.agent.destroy();
  }

  /** Closes the connections at once, cutting off the requests under way. */
  destroy(): void {
    this.closed = true;
    this.agent.destroy();
  }

  private track<T>(send: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(netError(NET_ERRORS.clientClosed, 'the client is closed'));
    const request = send();
    this.pending.add(request);
    const done = () => this.pending.delete(request);
    request.then(done, done);
    return request;
  }

  private get maxAnswerBytes(): number {
    return this.opts.maxAnswerBytes ?? NETWORK_LIMITS.apiAnswerBytes;
  }

  private tooLarge(method: string, path: string): AnswerTooLargeError {
    const name = this.opts.serverName ?? 'the server';
    const host = this.opts.origin.host;
    const limit = this.maxAnswerBytes;
    return new AnswerTooLargeError(
      host,
      limit,
      `${name[0]!.toUpperCase()}${name.slice(1)} ${host} answered ${method} ${path.split('?')[0]} with more than ${formatBytes(limit)}, more than any answer of its API holds; the rest was not read.`,
    );
  }
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON (a proxy's HTML page, say): kept as text for the message.
    return text;
  }
}
