import { close, fstat, open } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname } from 'node:path';
import { promisify } from 'node:util';
import { SERVE_CONTENT_TYPES, SERVE_DEFAULT_CONTENT_TYPE } from '../constants.js';
import { ifRangeMatches, notModified, preconditionFailed, validatorsOf } from './conditional.js';
import type { FileReads } from './file-reads.js';
import type { ServeMetrics } from './metrics.js';
import { parseRange } from './range.js';
import { sendFileRange } from './send-file.js';
import { sendStatus } from './short-answer.js';

// Plain descriptors, not FileHandles: a FileHandle lost by mistake would be closed by the garbage
// collector and hide a leak; a descriptor is closed by sendFileRange or here, nowhere else.
const openFd = promisify(open);
const fstatFd = promisify(fstat);
const closeFd = promisify(close);

/** How a file's body is sent. */
export interface BodyOptions {
  /** Size of each of the two read buffers of a download in bytes. */
  readBuffer: number;
  /** Where the process's file reads run: the event loop while they are fast, the pool for a while after two slow ones. */
  reads: FileReads;
  /** Milliseconds a response body may make no progress before it is cut; 0: never. */
  sendTimeoutMs: number;
  metrics?: ServeMetrics;
}

/**
 * Answers a GET or HEAD of the regular file at `real`: its headers, 304, 412 or 416 as the request's
 * conditions and range say, and its bytes. `onBytes` is told of each chunk sent.
 */
export async function sendDepotFile(req: IncomingMessage, res: ServerResponse, real: string, body: BodyOptions, onBytes: (n: number) => void): Promise<void> {
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
    const range = writeHead(req, res, real, info.size, info.mtimeMs);
    if (!range) return;
    handed = true;
    sendBody(fd, range, res, body, onBytes);
  } finally {
    if (!handed) await closeFd(fd);
  }
}

/** Writes the response's head; returns the bytes the body holds, or undefined when the response is complete (HEAD, 304, 412, 416, empty). */
function writeHead(req: IncomingMessage, res: ServerResponse, real: string, size: number, mtimeMs: number): { start: number; end: number } | undefined {
  const v = validatorsOf(size, mtimeMs);
  const headers: Record<string, string> = {
    'Accept-Ranges': 'bytes',
    'Content-Type': SERVE_CONTENT_TYPES[extname(real).toLowerCase()] ?? SERVE_DEFAULT_CONTENT_TYPE,
    ETag: v.etag,
    'Last-Modified': v.lastModified,
    'X-Content-Type-Options': 'nosniff',
  };
  if (preconditionFailed(v, req.headers['if-match'], req.headers['if-unmodified-since'])) {
    sendStatus(res, 412, { ETag: v.etag, 'Last-Modified': v.lastModified });
    return undefined;
  }
  if (notModified(v, req.headers['if-none-match'], req.headers['if-modified-since'])) {
    res.writeHead(304, headers);
    res.end();
    return undefined;
  }
  let status = 200;
  let start = 0;
  let end = size - 1;
  const rangeHeader = req.headers.range;
  if (rangeHeader !== undefined && ifRangeMatches(v, req.headers['if-range'] as string | undefined)) {
    const range = parseRange(rangeHeader, size);
    if (range === 'unsatisfiable') {
      sendStatus(res, 416, { 'Content-Range': `bytes */${size}`, 'Accept-Ranges': 'bytes' });
      return undefined;
    }
    if (range) {
      status = 206;
      ({ start, end } = range);
      headers['Content-Range'] = `bytes ${start}-${end}/${size}`;
    }
  }
  // A JS number is exact to 2^53: Content-Length stays right far beyond 4 GiB.
  headers['Content-Length'] = String(end - start + 1);
  res.writeHead(status, headers);
  if (req.method === 'HEAD' || end < start) {
    res.end();
    return undefined;
  }
  return { start, end };
}

/** Hands `fd` to sendFileRange, which closes it, with the send timeout and the download counted. */
function sendBody(fd: number, range: { start: number; end: number }, res: ServerResponse, body: BodyOptions, onBytes: (n: number) => void): void {
  // As nginx's send_timeout: a body that makes no progress for this long (a client that stopped reading
  // with the connection open) is cut, which releases its descriptor. The timer is the socket's: any
  // write that completes restarts it, so a slow but moving download is never cut.
  if (body.sendTimeoutMs > 0) res.setTimeout(body.sendTimeoutMs, () => res.destroy());
  const metrics = body.metrics;
  // A client gone during the lookups has closed the response already: its 'close' will not come again.
  if (metrics && !res.closed) {
    metrics.downloadStarted();
    res.once('close', () => metrics.downloadEnded());
  }
  sendFileRange(fd, range.start, range.end, res, body.readBuffer, body.reads, onBytes);
}
