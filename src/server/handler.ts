import type { IncomingMessage, ServerResponse } from 'node:http';
import { SERVE_METHODS } from '../constants.js';
import type { AccessLog } from './access-log.js';
import type { Authenticator } from './auth.js';
import { FileReads, type FileReadPolicy } from './file-reads.js';
import { sendDepotFile, type BodyOptions } from './file-response.js';
import { admit, type Gate } from './gate.js';
import { sendHealth } from './health.js';
import type { ServeMetrics } from './metrics.js';
import { pageRoute, sendCaCertificate, sendMetrics, sendStatusPage, type PageRoute, type PageSources } from './pages.js';
import { locateInsideRoot, parseRequestPath, type PathVerdict } from './paths.js';
import { sendStatus } from './short-answer.js';
import { SERVE_DEFAULT_SEND_TIMEOUT_SECONDS, SERVE_LOOP_READ_BOUND_MS, SERVE_POOL_READ_MS, SERVE_READ_BUFFER } from './tuning.js';

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
  /** When file reads leave the event loop for the pool; default SERVE_LOOP_READ_BOUND_MS and SERVE_POOL_READ_MS. */
  fileReads?: FileReadPolicy;
  /** Milliseconds a response body may make no progress before it is cut; 0: never. */
  sendTimeoutMs?: number;
  /** True once the server is shutting down: responses then close their connection. */
  isClosing?: () => boolean;
  /** Counters of this serving process; nothing is counted without. */
  metrics?: ServeMetrics;
  /** The server's own pages at the root (status, /healthz, /metrics, /ca.pem); without, every path is a depot file. */
  pages?: PageSources;
}

const ALLOW = SERVE_METHODS.join(', ');

/** One request as the access log tells it. */
interface Exchange {
  /** The client's address, taken when the request starts: once the socket is destroyed it is gone. */
  remote: string | undefined;
  user?: string;
  path: string;
  bytes: number;
  start: number;
}

/** The request handler of the depot: GET and HEAD of regular files under the root, nothing else. */
export function createHandler(options: HandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const pages = options.pages;
  const gate: Gate = {
    realRoot: options.realRoot,
    auth: options.auth,
    openPrefixes: options.openPrefixes ?? [],
    metricsOpen: pages?.metricsOpen ?? false,
    metrics: options.metrics,
  };
  const body: BodyOptions = {
    readBuffer: options.readBuffer ?? SERVE_READ_BUFFER,
    reads: new FileReads(options.fileReads ?? { loopBoundMs: SERVE_LOOP_READ_BOUND_MS, poolMs: SERVE_POOL_READ_MS }, () => options.metrics?.slowFileRead()),
    sendTimeoutMs: options.sendTimeoutMs ?? SERVE_DEFAULT_SEND_TIMEOUT_SECONDS * 1000,
    metrics: options.metrics,
  };

  async function serve(req: IncomingMessage, res: ServerResponse, ex: Exchange): Promise<void> {
    if (options.isClosing?.()) res.setHeader('Connection', 'close');
    const verdict = screen(req);
    if (!verdict.ok) return sendStatus(res, verdict.status, verdict.status === 405 ? { Allow: ALLOW } : {});
    ex.path = verdict.path;
    const page = pages ? pageRoute(verdict.path) : undefined;
    // Public, and never behind credentials: the probe, and the CA certificate one needs before trusting anything.
    if (page === 'health') return sendHealth(res, options.isClosing?.() ?? false);
    if (page === 'ca' && sendCaCertificate(res, (await pages!.status())?.ca.pem)) return;
    const admitted = await admit(gate, req, res, verdict.segments, page, ex.remote);
    if (!admitted) return;
    ex.user = admitted.user;
    if (page !== undefined) return sendPage(req, res, page, pages!);
    // A file asked for as a folder (`.../vcfManifest.json/`) is not that file, and folders are not listed.
    if (verdict.folder) return sendStatus(res, 404);
    const real = (admitted.located ?? (await locateInsideRoot(options.realRoot, verdict.segments, false))).real;
    if (!real) return sendStatus(res, 404);
    const metrics = options.metrics;
    return sendDepotFile(req, res, real, body, (n) => {
      ex.bytes += n;
      metrics?.fileBytesSent(n);
    });
  }

  return (req, res) => {
    const ex: Exchange = { remote: req.socket.remoteAddress, path: '-', bytes: 0, start: Date.now() };
    const metrics = options.metrics;
    if (metrics) res.once('close', () => metrics.request(req.method, res.statusCode));
    if (options.log) logWhenClosed(options.log, req, res, ex);
    serve(req, res, ex).catch(() => {
      if (!res.headersSent) sendStatus(res, 500);
      else res.destroy();
    });
  };
}

/** The method and the request target, before anything is looked up: a 405, a 400 or a 404, or the path to serve. */
function screen(req: IncomingMessage): PathVerdict | { ok: false; status: 405 } {
  const method = req.method ?? '';
  if (method !== 'GET' && method !== 'HEAD') return { ok: false, status: 405 };
  // Node keeps the first of two Authorization fields; a proxy in front may keep the other: refuse the ambiguity.
  if ((req.headersDistinct.authorization?.length ?? 0) > 1) return { ok: false, status: 400 };
  return parseRequestPath(req.url ?? '/');
}

/** One of the server's own pages, the credentials checked. */
async function sendPage(req: IncomingMessage, res: ServerResponse, page: PageRoute, pages: PageSources): Promise<void> {
  if (page === 'status') return sendStatusPage(req, res, await pages.status());
  if (page === 'metrics') return sendMetrics(res, await pages.metricsText());
  // /ca.pem when no CA certificate is known (/healthz never comes here): like any path that names no file.
  return sendStatus(res, 404);
}

function logWhenClosed(log: AccessLog, req: IncomingMessage, res: ServerResponse, ex: Exchange): void {
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
