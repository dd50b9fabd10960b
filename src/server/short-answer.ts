import type { ServerResponse } from 'node:http';

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

/** A short text answer; for HEAD Node drops the body and keeps the same headers. */
export function sendStatus(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  const body = `${REASONS[status] ?? 'Error'}\n`;
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(body);
}
