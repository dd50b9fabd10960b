import { close, fstat, open } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname } from 'node:path';
import { promisify } from 'node:util';
import { SERVE_CONTENT_TYPES, SERVE_DEFAULT_CONTENT_TYPE, SERVE_METHODS } from '../constants.js';
import type { AccessLog } from './access-log.js';
import { WWW_AUTHENTICATE, type Authenticator } from './auth.js';
import { ifRangeMatches, notModified, preconditionFailed, validatorsOf } from './conditional.js';
import { sendHealth } from './health.js';
import type { ServeMetrics } from './metrics.js';
import { pageRoute, sendCaCertificate, sendMetrics, sendStatusPage, type PageSources } from './pages.js';
import { SERVE_DEFAULT_SEND_TIMEOUT_SECONDS, SERVE_READ_BUFFER } from './tuning.js';
import { isUnderPrefix, locateInsideRoot, parseRequestPath } from './paths.js';
import { parseRange } from './range.js';
import { sendFileRange } from './send-file.js';

export interface HandlerOptions {
  /** The web root, already a realpath. */
  realRoot: string;
  auth?: Authenticator;
  /**
   * Root-relative path prefixes (normalised, whole segments) served without
   * auth: a request is open when the file it resolves to lies under one.
   */
  openPrefixes?: readonly string[];
  log?: AccessLog;
  readBuffer?: number;
  /** Milliseconds a response body may make no progress before it is cut; 0: never. */
  sendTimeoutMs?: number;
  /** True once the server is shutting down: responses then close their connection. */
  isClosing?: () => boolean;
  /** Counters of this serving process; nothing is counted without. */
  metrics?: ServeMetrics;
  /** The server's own pages at the root (status, /healthz, /metrics, /ca.pem); without, every path is a depot file. */
  pages?: PageSources;
}

// Plain descriptors, not FileHandles: a FileHandle lost by mistake would be closed by the garbage
// collector and hide a leak; a descriptor is closed by sendFileRange or here, nowhere else.
const openFd = promisify(open);
const fstatFd = promisify(fstat);
const closeFd = promisify(close);

const ALLOW = SERVE_METHODS.join(', ');

const REASONS: Record<number, string> = {
  400: 'Bad request',
  401: 'Authentication required',
  404: 'Not found',
  405: 'Method not allowed',
  412: 'Precondition failed',
  416: 'Range not satisfiable',
  429: 'Too many failed attempts; try again later',
  500: 'Internal error',
  503: 'Busy; try again later',
};

interface Exchange {
  /** The client's address, taken when the request starts: once the socket is destroyed it is gone. */
  remote: string | undefined;
  user?: string;
  path: string;
  bytes: number;
  start: number;
}

/** A short text answer; for HEAD Node drops the body and keeps the same headers. */
function sendStatus(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  const body = `${REASONS[status] ?? 'Error'}\n`;
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(body);
}

/** The request handler of the depot: GET and HEAD of regular files under the root, nothing else. */
export function createHandler(options: HandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const readBuffer = options.readBuffer ?? SERVE_READ_BUFFER;
  const sendTimeoutMs = options.sendTimeoutMs ?? SERVE_DEFAULT_SEND_TIMEOUT_SECONDS * 1000;
  const openPrefixes = options.openPrefixes ?? [];
  const isOpen = (rel: string | undefined) => rel !== undefined && openPrefixes.some((p) => isUnderPrefix(rel, p));

  async function serve(req: IncomingMessage, res: ServerResponse, ex: Exchange): Promise<void> {
    if (options.isClosing?.()) res.setHeader('Connection', 'close');
    const method = req.method ?? '';
    if (method !== 'GET' && method !== 'HEAD') return sendStatus(res, 405, { Allow: ALLOW });
    // Node keeps the first of two Authorization fields; a proxy in front may keep the other: refuse the ambiguity.
    if ((req.headersDistinct.authorization?.length ?? 0) > 1) return sendStatus(res, 400);
    const verdict = parseRequestPath(req.url ?? '/');
    if (!verdict.ok) return sendStatus(res, verdict.status);
    ex.path = verdict.path;
    const pages = options.pages;
    const page = pages ? pageRoute(verdict.path) : undefined;
    // Public, and never behind credentials: the probe, and the CA certificate one needs before trusting anything.
    if (page === 'health') return sendHealth(res, options.isClosing?.() ?? false);
    if (page === 'ca' && sendCaCertificate(res, (await pages!.status())?.ca.pem)) return;
    let located: { real?: string; rel?: string } | undefined;
    if (options.auth && !(page === 'metrics' && pages!.metricsOpen)) {
      // Where the request lands decides, never how it is spelt: a symlink under an open prefix that points
      // into the protected tree stays protected. Without open prefixes nothing is looked up before the credentials.
      if (page === undefined && openPrefixes.length > 0) located = await locateInsideRoot(options.realRoot, verdict.segments, true);
      if (page !== undefined || !isOpen(located?.rel)) {
        const verdict = await options.auth.check(req.headers.authorization, ex.remote);
        if (!verdict.ok) {
          if (verdict.status === 401) {
            options.metrics?.authFailure(req.headers.authorization === undefined ? 'missing' : 'rejected');
            return sendStatus(res, 401, { 'WWW-Authenticate': WWW_AUTHENTICATE });
          }
          options.metrics?.authFailure(verdict.status === 429 ? 'rate_limited' : 'busy');
          return sendStatus(res, verdict.status, { 'Retry-After': String(verdict.retryAfter) });
        }
        ex.user = verdict.user;
      }
    }
    if (page === 'status') return sendStatusPage(req, res, await pages!.status());
    if (page === 'metrics') return sendMetrics(res, await pages!.metricsText());
    // /ca.pem when no CA certificate is known: like any path that names no file.
    if (page === 'ca') return sendStatus(res, 404);
    // A file asked for as a folder (`.../vcfManifest.json/`) is not that file, and folders are not listed.
    if (verdict.folder) return sendStatus(res, 404);
    located ??= await locateInsideRoot(options.realRoot, verdict.segments, false);
    const real = located.real;
    if (!real) return sendStatus(res, 404);
    let fd: number;
    try {
      fd = await openFd(real, 'r');
    } catch {
      return sendStatus(res, 404);
    }
    let handed = false;
    try {
      // fstat of the open file: the headers describe exactly the bytes that will be read.
      const info = await fstatFd(fd);
      if (!info.isFile()) return sendStatus(res, 404);
      const size = info.size;
      const v = validatorsOf(size, info.mtimeMs);
      const headers: Record<string, string> = {
        'Accept-Ranges': 'bytes',
        'Content-Type': SERVE_CONTENT_TYPES[extname(real).toLowerCase()] ?? SERVE_DEFAULT_CONTENT_TYPE,
        ETag: v.etag,
        'Last-Modified': v.lastModified,
        'X-Content-Type-Options': 'nosniff',
      };
      if (preconditionFailed(v, req.headers['if-match'], req.headers['if-unmodified-since']))
        return sendStatus(res, 412, { ETag: v.etag, 'Last-Modified': v.lastModified });
      if (notModified(v, req.headers['if-none-match'], req.headers['if-modified-since'])) {
        res.writeHead(304, headers);
        res.end();
        return;
      }
      let status = 200;
      let start = 0;
      let end = size - 1;
      const rangeHeader = req.headers.range;
      if (rangeHeader !== undefined && ifRangeMatches(v, req.headers['if-range'] as string | undefined)) {
        const range = parseRange(rangeHeader, size);
        if (range === 'unsatisfiable') return sendStatus(res, 416, { 'Content-Range': `bytes */${size}`, 'Accept-Ranges': 'bytes' });
        if (range) {
          status = 206;
          ({ start, end } = range);
          headers['Content-Range'] = `bytes ${start}-${end}/${size}`;
        }
      }
      // A JS number is exact to 2^53: Content-Length stays right far beyond 4 GiB.
      headers['Content-Length'] = String(end - start + 1);
      res.writeHead(status, headers);
      if (method === 'HEAD' || end < start) {
        res.end();
        return;
      }
      handed = true;
      // As nginx's send_timeout: a body that makes no progress for this long (a client that stopped reading
      // with the connection open) is cut, which releases its descriptor. The timer is the socket's: any
      // write that completes restarts it, so a slow but moving download is never cut.
      if (sendTimeoutMs > 0) res.setTimeout(sendTimeoutMs, () => res.destroy());
      const metrics = options.metrics;
      // A client gone during the lookups has closed the response already: its 'close' will not come again.
      if (metrics && !res.closed) {
        metrics.downloadStarted();
        res.once('close', () => metrics.downloadEnded());
      }
      sendFileRange(fd, start, end, res, readBuffer, (n) => {
        ex.bytes += n;
        metrics?.fileBytesSent(n);
      });
    } finally {
      if (!handed) await closeFd(fd);
    }
  }

  return (req, res) => {
    const ex: Exchange = { remote: req.socket.remoteAddress, path: '-', bytes: 0, start: Date.now() };
    const metrics = options.metrics;
    if (metrics) res.once('close', () => metrics.request(req.method, res.statusCode));
    if (options.log) {
      const log = options.log;
      res.once('close', () => {
        log.write({
          time: new Date(ex.start),
          remote: ex.remote ?? '-',
          user: ex.user,
          method: req.method ?? '-',
          path: ex.path === '-' ? (req.url ?? '-').split('?')[0]! : ex.path,
          httpVersion: req.httpVersion,
          status: res.statusCode,
          bytes: ex.bytes,
          referer: req.headers.referer,
          userAgent: req.headers['user-agent'],
          durationMs: Date.now() - ex.start,
        });
      });
    }
    serve(req, res, ex).catch(() => {
      if (!res.headersSent) sendStatus(res, 500);
      else res.destroy();
    });
  };
}
