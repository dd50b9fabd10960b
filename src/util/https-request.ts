import type { IncomingHttpHeaders, RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import { isIP, connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type SecureContext, type TLSSocket } from 'node:tls';

/**
 * The API clients' HTTPS on Node's own HTTP client: kept-alive connections,
 * the TCP connection before TLS, and undici's timeouts and error codes, which
 * the transport's messages and retries were written for. undici's core cost
 * `installer status` about 0.1 s of its 0.29 at every start on Node 20:
 * loading it, compiling its WebAssembly HTTP parser and, at exit, waiting for
 * that parser's optimised compile in the background; Node's parser is built in.
 */

/** A failure with undici's code for it (`UND_ERR_HEADERS_TIMEOUT` ...), as the callers' messages and retries name them. */
function codedError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** Failures of the connection itself (TCP or the handshake): reported with the socket's own code and words. */
const connectFailures = new WeakSet<Error>();

export interface HttpsConnectOptions {
  /** The shared context of the CAs; or the CAs themselves, or neither (the system store). */
  secureContext?: SecureContext;
  ca?: string[];
  rejectUnauthorized: boolean;
  /** Connect timeout: the TCP connection and the TLS handshake together. */
  timeoutMs: number;
}

/**
 * An agent that keeps connections alive and connects TCP first, starting TLS
 * once the connection stands: building the TLS socket (and its OpenSSL state)
 * before the TCP connect was most of the cost of each refused connection over
 * a fleet where most consumers are down. The errors are the socket's
 * (ECONNREFUSED, a TLS verification code) or `UND_ERR_CONNECT_TIMEOUT`.
 */
export class TcpFirstAgent extends HttpsAgent {
  constructor(private readonly connectOptions: HttpsConnectOptions) {
    super({ keepAlive: true, scheduling: 'lifo' });
  }

  // Handed over by the callback once TLS stands, so that the request is written to a connection ready for it.
  override createConnection(options: RequestOptions, callback?: (err: Error | null, stream: Duplex) => void): undefined {
    const host = options.host ?? 'localhost';
    const port = Number(options.port) || 443;
    const { secureContext, ca, rejectUnauthorized, timeoutMs } = this.connectOptions;
    let socket: Socket | TLSSocket = tcpConnect({ host, port });
    let settled = false;
    const settle = (err: Error | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.off('error', settle);
      if (err) {
        connectFailures.add(err);
        socket.destroy();
      }
      callback!(err, socket);
    };
    const timer = setTimeout(
      () => settle(codedError('UND_ERR_CONNECT_TIMEOUT', `Connect Timeout Error (attempted address: ${host}:${port}, timeout: ${timeoutMs}ms)`)),
      timeoutMs,
    );
    socket.once('error', settle).once('connect', () => {
      socket.off('error', settle);
      // No server name for an address: SNI carries host names only.
      socket = tlsConnect({
        socket: socket as Socket,
        host,
        ...(isIP(host) === 0 ? { servername: host } : {}),
        ...(secureContext ? { secureContext } : ca ? { ca } : {}),
        rejectUnauthorized,
      });
      socket.once('error', settle).once('secureConnect', () => settle(null));
    });
    return undefined;
  }
}

export interface HttpsAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as text; undefined when it was longer than the limit (the rest was not read, the connection closed). */
  text: string | undefined;
}

export interface HttpsRequestOptions {
  method: string;
  headers: Record<string, string>;
  body?: string;
  agent: TcpFirstAgent;
  /**
   * The whole request, from its start to the answer's last byte: past it, the request fails with the
   * code of the phase it was in (`UND_ERR_CONNECT_TIMEOUT`, `UND_ERR_HEADERS_TIMEOUT`, `UND_ERR_BODY_TIMEOUT`).
   */
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal;
}

/**
 * Node's words for a connection the server closed before its answer was whole (`socket hang up`,
 * `aborted`: ECONNRESET without a system call) as undici says it, `other side closed`
 * (UND_ERR_SOCKET); a reset the system reports, or one during the handshake, keeps its own code.
 */
function asUndiciError(err: Error): Error {
  const { code, syscall } = err as NodeJS.ErrnoException;
  return code === 'ECONNRESET' && syscall === undefined && !connectFailures.has(err) ? codedError('UND_ERR_SOCKET', 'other side closed') : err;
}

/** What a request that outlived its timeout fails with, by the phase it was in. */
function deadlineError(phase: 'connect' | 'headers' | 'body', url: URL, timeoutMs: number): Error {
  if (phase === 'connect') return codedError('UND_ERR_CONNECT_TIMEOUT', `Connect Timeout Error (attempted address: ${url.host}, timeout: ${timeoutMs}ms)`);
  return phase === 'headers' ? codedError('UND_ERR_HEADERS_TIMEOUT', 'Headers Timeout Error') : codedError('UND_ERR_BODY_TIMEOUT', 'Body Timeout Error');
}

/**
 * One request: its status and its body as text, read up to `maxBytes`, all
 * within `timeoutMs`. One deadline for the whole, not a timer restarted at each
 * part of the body: a server dripping a byte a second would hold a timer of
 * that kind, and the fleet waiting for its row, for as long as it liked.
 */
export function requestText(url: URL, opts: HttpsRequestOptions): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let phase: 'connect' | 'headers' | 'body' = 'connect';
    const finish = (err: Error | null, answer?: HttpsAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      if (err) reject(asUndiciError(err));
      else resolve(answer!);
    };
    // The length of every body, as undici sends it: Node sends a DELETE's body with neither length nor chunks otherwise.
    const headers = opts.body === undefined ? opts.headers : { ...opts.headers, 'content-length': String(Buffer.byteLength(opts.body)) };
    const req = httpsRequest(url, { method: opts.method, headers, agent: opts.agent, ...(opts.signal ? { signal: opts.signal } : {}) });
    const deadline = setTimeout(() => req.destroy(deadlineError(phase, url, opts.timeoutMs)), opts.timeoutMs);
    // Every error, not the first alone: a connection handed over after the request was destroyed reports again.
    req.on('error', (err) => finish(err));
    // The connection stands (TLS included) once the agent hands it over.
    req.once('socket', () => phase === 'connect' && (phase = 'headers'));
    req.once('response', (res) => {
      phase = 'body';
      const status = res.statusCode ?? 0;
      const { headers: answerHeaders } = res;
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > opts.maxBytes) {
        finish(null, { status, headers: answerHeaders, text: undefined });
        req.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      let total = 0;
      res.on('data', (chunk: Buffer) => {
        total += chunk.length;
        if (total > opts.maxBytes) {
          finish(null, { status, headers: answerHeaders, text: undefined });
          req.destroy();
          return;
        }
        chunks.push(chunk);
      });
      res.once('error', (err) => finish(err));
      // Closed with neither its end nor an error (destroyed from outside): never left waiting.
      res.once('close', () => finish(codedError('UND_ERR_SOCKET', 'other side closed')));
      // An answer cut short ends in 'error' (ECONNRESET, aborted) before 'end' could say it was whole.
      // TextDecoder drops a byte order mark, as undici's text() did.
      res.once('end', () => finish(null, { status, headers: answerHeaders, text: new TextDecoder().decode(Buffer.concat(chunks)) }));
    });
    req.end(opts.body);
  });
}
