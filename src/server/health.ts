import type { ServerResponse } from 'node:http';
import { SERVE_HEALTH_BODIES } from '../constants.js';

/**
 * The liveness probe: 200 `{"status":"ok"}` while serving, 503 `{"status":"stopping"}` once a graceful stop
 * has begun (new connections are refused then; a request on a connection still open, such as one pipelined
 * behind a running download, gets the 503). Nothing else: no version, no path, no count.
 */
export function sendHealth(res: ServerResponse, stopping: boolean): void {
  const body = stopping ? SERVE_HEALTH_BODIES.stopping : SERVE_HEALTH_BODIES.ok;
  res.writeHead(stopping ? 503 : 200, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(body);
}
