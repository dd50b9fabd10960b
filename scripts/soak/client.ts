// One HTTPS exchange of the soak with every body byte checked as it arrives: against the local file's
// bytes at the same offset (the server and the soak share the machine, so the depot is on disk here too)
// and, for whole files, through a SHA-256 compared with the catalog afterwards.
import { createHash } from 'node:crypto';
import { readSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, request } from 'node:https';
import type { TLSSocket } from 'node:tls';

export interface ExchangeOptions {
  method: 'GET' | 'HEAD';
  path: string;
  /** A keep-alive agent of one loop, or false for a new connection. */
  agent: Agent | false;
  headers?: Record<string, string>;
  /** Compare every body byte with the file open as `fd`, from `offset`. */
  compare?: { fd: number; offset: number };
  /** Hash the body (SHA-256, hex in the result). */
  hash?: boolean;
  /** Destroy the connection once this many body bytes have arrived (0: as soon as the headers have). */
  abortAfter?: number;
  /** Keep the body (the small pages). */
  keepBody?: boolean;
  /** A request that makes no progress for this long is cut and counted as failed. */
  timeoutMs: number;
}

export interface ExchangeResult {
  /** 0 when no response came. */
  status: number;
  headers: IncomingHttpHeaders;
  /** Body bytes received. */
  bytes: number;
  /** Body bytes that differ from the local file (or lie beyond its end). */
  wrongBytes: number;
  sha256?: string;
  body?: Buffer;
  /** The body arrived whole (as long as announced). */
  complete: boolean;
  /** Cut by us, as asked with abortAfter. */
  aborted: boolean;
  /** A network error, a timeout or a body cut short by the other side. */
  error?: string;
  startedAt: number;
  endedAt: number;
  /** The connection the request went on, to tell a pooled connection that the server had closed from a new one that failed. */
  connection: ConnectionInfo;
}

export interface ConnectionInfo {
  /** Used by an earlier request (the agent's keep-alive pool). */
  reused: boolean;
  localPort?: number;
  /** Since the TLS handshake ended; undefined when it never did. */
  ageMs?: number;
  /** Earlier requests on it. */
  requestsBefore: number;
  /** Since the previous response on it ended, as this client saw it. */
  idleMs?: number;
}

export interface ConnectionHook {
  /** Called for each new TLS connection once its handshake is done, with the time its request started. */
  (socket: TLSSocket, requestStartedAt: number): void;
}

/** What the client knows of each connection it used. */
const sockets = new WeakMap<object, { connectedAt?: number; requests: number; lastEndedAt?: number }>();
let scratch = Buffer.allocUnsafe(1 << 20);

/** Body bytes in `chunk` that differ from the file's bytes at `position` (a file shorter than that counts as different). */
function wrongBytesIn(chunk: Buffer, fd: number, position: number): number {
  if (scratch.length < chunk.length) scratch = Buffer.allocUnsafe(chunk.length);
  const n = readSync(fd, scratch, 0, chunk.length, position);
  const local = scratch.subarray(0, n);
  if (n === chunk.length && chunk.equals(local)) return 0;
  let wrong = chunk.length - n;
  for (let i = 0; i < n; i++) if (chunk[i] !== local[i]) wrong++;
  return wrong;
}

export interface Endpoint {
  host: string;
  port: number;
  /** The CA certificate the server's certificates are issued from. */
  ca: string;
  /** The name checked against the certificate. */
  servername: string;
  onConnection?: ConnectionHook;
}

/** One request; never rejects: what went wrong is in `error`. */
export function exchange(endpoint: Endpoint, o: ExchangeOptions): Promise<ExchangeResult> {
  const startedAt = Date.now();
  return new Promise((resolve) => {
    let settled = false;
    const result: ExchangeResult = {
      status: 0,
      headers: {},
      bytes: 0,
      wrongBytes: 0,
      complete: false,
      aborted: false,
      startedAt,
      endedAt: 0,
      connection: { reused: false, requestsBefore: 0 },
    };
    let state: { connectedAt?: number; requests: number; lastEndedAt?: number } | undefined;
    const finish = (error?: string) => {
      if (settled) return;
      settled = true;
      if (error !== undefined && !result.aborted) result.error = error;
      result.endedAt = Date.now();
      if (state) {
        if (state.connectedAt !== undefined) result.connection.ageMs = result.endedAt - state.connectedAt;
        state.requests++;
        state.lastEndedAt = result.endedAt;
      }
      resolve(result);
    };
    const req = request({
      host: endpoint.host,
      port: endpoint.port,
      method: o.method,
      path: o.path,
      headers: o.headers,
      agent: o.agent,
      ca: endpoint.ca,
      servername: endpoint.servername,
    });
    req.on('socket', (socket) => {
      const tls = socket as TLSSocket;
      state = sockets.get(socket);
      if (state) {
        result.connection = {
          reused: true,
          localPort: tls.localPort,
          requestsBefore: state.requests,
          idleMs: state.lastEndedAt === undefined ? undefined : startedAt - state.lastEndedAt,
        };
        return;
      }
      const fresh: { connectedAt?: number; requests: number; lastEndedAt?: number } = { requests: 0 };
      state = fresh;
      sockets.set(socket, fresh);
      tls.once('secureConnect', () => {
        fresh.connectedAt = Date.now();
        result.connection.localPort = tls.localPort;
        endpoint.onConnection?.(tls, startedAt);
      });
    });
    req.setTimeout(o.timeoutMs, () => req.destroy(new Error(`no progress for ${o.timeoutMs / 1000} s`)));
    req.on('error', (err: NodeJS.ErrnoException) => finish(err.code ? `${err.code}: ${err.message}` : err.message));
    req.on('response', (res) => {
      result.status = res.statusCode ?? 0;
      result.headers = res.headers;
      const hash = o.hash ? createHash('sha256') : undefined;
      const kept: Buffer[] = [];
      const cut = () => {
        result.aborted = true;
        req.destroy();
        finish();
      };
      if (o.abortAfter === 0) return cut();
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        if (o.compare) result.wrongBytes += wrongBytesIn(chunk, o.compare.fd, o.compare.offset + result.bytes);
        result.bytes += chunk.length;
        hash?.update(chunk);
        if (o.keepBody) kept.push(chunk);
        if (o.abortAfter !== undefined && result.bytes >= o.abortAfter) cut();
      });
      res.on('error', () => {});
      res.on('close', () => {
        if (settled) return;
        result.complete = res.complete;
        if (hash && res.complete) result.sha256 = hash.digest('hex');
        if (o.keepBody) result.body = Buffer.concat(kept);
        finish(res.complete ? undefined : `body cut after ${result.bytes} bytes`);
      });
    });
    req.end();
  });
}

/** A keep-alive agent for one loop of sequential requests (one connection, reused until the server or a kill ends it). */
export function loopAgent(localAddress?: string): Agent {
  return new Agent({ keepAlive: true, maxSockets: 1, localAddress });
}
