import { Agent, type IncomingHttpHeaders, type IncomingMessage, type RequestOptions, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type ConnectOptions, connectFailures, openConnection } from './connect.js';
import { NET_ERRORS, netError } from './errors.js';

/**
 * The one HTTP transport of depotkit, on Node's own HTTP client (measured against undici in
 * scripts/bench/net-engine.ts: faster to start, for many small requests and for one large body):
 * kept-alive connections, each opened by `openConnection` (TCP first, then the proxy's tunnel and
 * TLS with the caller's rules). HTTP or HTTPS by `connect.tls`.
 */
export class NetAgent extends Agent {
  constructor(
    private readonly connect: ConnectOptions,
    /** Connections at most (Infinity by default); raised with `allow`. */
    maxSockets?: number,
  ) {
    super({ keepAlive: true, scheduling: 'lifo', ...(maxSockets !== undefined ? { maxSockets } : {}) });
    // The protocol that Node's request functions check an agent against.
    (this as { protocol?: string }).protocol = connect.tls ? 'https:' : 'http:';
  }

  get https(): boolean {
    return this.connect.tls !== undefined;
  }

  /** Lets the agent open up to `count` connections (never fewer than before). */
  allow(count: number): void {
    this.maxSockets = Math.max(this.maxSockets, count);
  }

  // Handed over by the callback once TLS stands, so that the request is written to a connection ready for it.
  override createConnection(options: RequestOptions, callback?: (err: Error | null, stream: Duplex) => void): undefined {
    const host = (options.host ?? 'localhost').replace(/^\[(.*)\]$/, '$1');
    const port = Number(options.port) || (this.https ? 443 : 80);
    // Node counts a server's connections from their hand-over: one still opening holds a place in its list
    // meanwhile, so that `maxSockets` bounds the connections opened at once too.
    const name = (options as { _agentKey?: string })._agentKey ?? this.getName(options);
    const sockets = this.sockets as Record<string, Socket[]>;
    const list = (sockets[name] ??= []);
    const place = { destroy: () => undefined } as unknown as Socket;
    list.push(place);
    const leave = () => {
      const at = list.indexOf(place);
      if (at >= 0) list.splice(at, 1);
    };
    openConnection(host, port, this.connect).then(
      (socket) => (leave(), callback!(null, socket)),
      (err: Error) => (leave(), callback!(err, undefined as never)),
    );
    return undefined;
  }
}

/**
 * Node's words for a connection the server closed before its answer was whole (`socket hang up`,
 * `aborted`: ECONNRESET without a system call) as ours, NET_CLOSED_EARLY; a reset the system reports,
 * or one during the handshake, keeps its own code.
 */
function ourError(err: Error): Error {
  const { code, syscall } = err as NodeJS.ErrnoException;
  return code === 'ECONNRESET' && syscall === undefined && !connectFailures.has(err) ? closedEarly() : err;
}

const closedEarly = () => netError(NET_ERRORS.closedEarly, 'the server closed the connection before its whole answer');

export interface RequestSettings {
  method: string;
  headers?: Record<string, string>;
  body?: string;
  agent: NetAgent;
  signal?: AbortSignal;
}

function send(url: URL, opts: RequestSettings): ReturnType<typeof httpRequest> {
  // The length of every body: Node sends a DELETE's body with neither length nor chunks otherwise.
  const headers = opts.body === undefined ? opts.headers : { ...opts.headers, 'content-length': String(Buffer.byteLength(opts.body)) };
  const options = { method: opts.method, headers, agent: opts.agent, ...(opts.signal ? { signal: opts.signal } : {}) };
  return (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options);
}

export interface TextAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as text; undefined when it was longer than the limit (the rest was not read, the connection closed). */
  text: string | undefined;
}

/** What a request that outlived its deadline fails with, by the phase it was in. */
function deadlineError(phase: 'connect' | 'headers' | 'body', url: URL, timeoutMs: number): Error {
  if (phase === 'connect') return netError(NET_ERRORS.connectTimeout, `no connection to ${url.host} within ${timeoutMs} ms`);
  return phase === 'headers'
    ? netError(NET_ERRORS.headersTimeout, `no answer within ${timeoutMs} ms`)
    : netError(NET_ERRORS.bodyTimeout, `no whole answer within ${timeoutMs} ms`);
}

/**
 * One request: its status and its body as text, read up to `maxBytes`, all
 * within `timeoutMs`. One deadline for the whole, not a timer restarted at each
 * part of the body: a server dripping a byte a second would hold a timer of
 * that kind, and the fleet waiting for its row, for as long as it liked.
 */
export function requestText(url: URL, opts: RequestSettings & { timeoutMs: number; maxBytes: number }): Promise<TextAnswer> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let phase: 'connect' | 'headers' | 'body' = 'connect';
    const finish = (err: Error | null, answer?: TextAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      if (err) reject(ourError(err));
      else resolve(answer!);
    };
    const req = send(url, opts);
    const deadline = setTimeout(() => req.destroy(deadlineError(phase, url, opts.timeoutMs)), opts.timeoutMs);
    // Every error, not the first alone: a connection handed over after the request was destroyed reports again.
    req.on('error', (err) => finish(err));
    // The connection stands (TLS included) once the agent hands it over.
    req.once('socket', () => phase === 'connect' && (phase = 'headers'));
    req.once('response', (res) => {
      phase = 'body';
      const head = { status: res.statusCode ?? 0, headers: res.headers };
      const tooLong = () => {
        finish(null, { ...head, text: undefined });
        req.destroy();
      };
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > opts.maxBytes) return tooLong();
      const chunks: Buffer[] = [];
      let total = 0;
      res.on('data', (chunk: Buffer) => {
        total += chunk.length;
        if (total > opts.maxBytes) return tooLong();
        chunks.push(chunk);
      });
      res.once('error', (err) => finish(err));
      // Closed with neither its end nor an error (destroyed from outside): never left waiting.
      res.once('close', () => finish(closedEarly()));
      // An answer cut short ends in 'error' (ECONNRESET, aborted) before 'end' could say it was whole.
      // TextDecoder drops a byte order mark, as a JSON reader expects.
      res.once('end', () => finish(null, { ...head, text: new TextDecoder().decode(Buffer.concat(chunks)) }));
    });
    req.end(opts.body);
  });
}

/** An answer whose body is read by the caller, as a stream. */
export interface StreamAnswer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: IncomingMessage;
}

/**
 * A request whose answer's body is the caller's to read: `idleMs` is the longest wait for the
 * answer's head, then between two parts of its body (NET_HEADERS_TIMEOUT, NET_BODY_TIMEOUT), as
 * a long download may take its time as long as it moves.
 */
export function requestStream(url: URL, opts: RequestSettings & { idleMs: number }): Promise<StreamAnswer> {
  return new Promise((resolve, reject) => {
    let response: IncomingMessage | undefined;
    const req = send(url, opts);
    req.setTimeout(opts.idleMs, () => {
      const err = deadlineError(response ? 'body' : 'headers', url, opts.idleMs);
      response?.destroy(err);
      req.destroy(err);
    });
    req.once('error', (err) => reject(ourError(err)));
    req.once('response', (res) => {
      response = res;
      resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
    });
    req.end(opts.body);
  });
}

/** Drops a body that is not wanted: up to `limit` bytes are read (a short one leaves the connection for the next request), a longer one is cut with its connection. */
export async function discard(answer: StreamAnswer, limit: number): Promise<void> {
  let size = 0;
  try {
    for await (const chunk of answer.body) {
      size += (chunk as Buffer).length;
      // Leaving the loop destroys the answer.
      if (size > limit) return;
    }
  } catch {
    // A body cut short is of no matter when it is not wanted.
  }
}
