import type { IncomingMessage, ServerResponse } from 'node:http';
import { SERVE_METRICS_CONTENT_TYPE, SERVE_PAGES, SERVE_PEM_CONTENT_TYPE } from '../constants.js';
import type { StatusData } from './status-data.js';
import { prefersJson, renderStatusPage, STATUS_PAGE_CSP, statusReport } from './status-page.js';

/** The server's own paths at the web root; everything else is a depot file. */
export type PageRoute = 'status' | 'health' | 'metrics' | 'ca';

const ROUTES: ReadonlyMap<string, PageRoute> = new Map([
  [SERVE_PAGES.status, 'status'],
  [SERVE_PAGES.health, 'health'],
  [SERVE_PAGES.metrics, 'metrics'],
  [SERVE_PAGES.caCert, 'ca'],
]);

/** The page a decoded request path names (exactly; `/healthz/` is not the probe), or undefined for a depot file. */
export function pageRoute(path: string): PageRoute | undefined {
  return ROUTES.get(path);
}

/** Where the pages' content comes from in this serving process. */
export interface PageSources {
  /** The last look at the depot (computed here, or handed over by the primary); undefined until the first. */
  status(): Promise<StatusData | undefined>;
  /** Prometheus text of every serving process. */
  metricsText(): Promise<string>;
  /** /metrics without credentials (`serve --metrics-open`). */
  metricsOpen: boolean;
}

function send(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    ...headers,
    'Content-Type': type,
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(body);
}

/** The status page, or its JSON for a client that prefers JSON; 503 before the depot was first looked at. */
export function sendStatusPage(req: IncomingMessage, res: ServerResponse, data: StatusData | undefined): void {
  if (!data) return send(res, 503, 'text/plain; charset=utf-8', 'Starting; try again in a moment\n', { 'Retry-After': '1' });
  if (prefersJson(req.headers.accept)) {
    return send(res, 200, 'application/json; charset=utf-8', `${JSON.stringify(statusReport(data), null, 2)}\n`, { Vary: 'Accept' });
  }
  send(res, 200, 'text/html; charset=utf-8', renderStatusPage(data), {
    Vary: 'Accept',
    'Content-Security-Policy': STATUS_PAGE_CSP,
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
  });
}

export function sendMetrics(res: ServerResponse, text: string): void {
  send(res, 200, SERVE_METRICS_CONTENT_TYPE, text);
}

/** The CA certificate (public data) when this server knows it and it is a CA certificate; 404 otherwise. */
export function sendCaCertificate(res: ServerResponse, pem: string | undefined): boolean {
  if (pem === undefined) return false;
  send(res, 200, SERVE_PEM_CONTENT_TYPE, pem, { 'Content-Disposition': 'attachment; filename="depot-ca.pem"' });
  return true;
}
