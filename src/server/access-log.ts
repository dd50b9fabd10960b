import { closeSync, constants, createWriteStream, fstatSync, openSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { describeFsError, errorMessage, usageError } from '../util/errors.js';

export type AccessLogFormat = 'combined' | 'json';

/** What is logged of one request: never a password, never the Authorization header. */
export interface AccessRecord {
  time: Date;
  remote: string;
  /** The authenticated user; '-' when there was none or the credentials were wrong. */
  user: string | undefined;
  method: string;
  /** Path without the query string. */
  path: string;
  httpVersion: string;
  status: number;
  bytes: number;
  referer: string | undefined;
  userAgent: string | undefined;
  durationMs: number;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** `22/Nov/2026:08:00:00 +0000`, the time format of the combined log. */
function clfTime(d: Date): string {
  return `${pad(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`;
}

/** Quotes a header value for the combined log; control characters and quotes cannot forge a line. */
function quoted(value: string | undefined): string {
  if (value === undefined || value === '') return '"-"';
  // eslint-disable-next-line no-control-regex -- escaping control characters is the point
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`).replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)}"`;
}

export function formatCombined(r: AccessRecord): string {
  const request = `${r.method} ${r.path} HTTP/${r.httpVersion}`;
  return `${r.remote} - ${r.user ?? '-'} [${clfTime(r.time)}] ${quoted(request)} ${r.status} ${r.bytes} ${quoted(r.referer)} ${quoted(r.userAgent)}`;
}

export function formatJson(r: AccessRecord): string {
  return JSON.stringify({
    time: r.time.toISOString(),
    remote: r.remote,
    user: r.user ?? null,
    method: r.method,
    path: r.path,
    httpVersion: r.httpVersion,
    status: r.status,
    bytes: r.bytes,
    referer: r.referer ?? null,
    userAgent: r.userAgent ?? null,
    durationMs: r.durationMs,
  });
}

export interface AccessLogOptions {
  /** A file to append to, or '-' for stdout. */
  destination: string;
  format?: AccessLogFormat;
}

export interface AccessLog {
  write(record: AccessRecord): void;
  /**
   * Opens the file again at its path (logrotate without copytruncate renames it, then signals): new lines
   * go to a new file there. A file that cannot be opened leaves the current one in use, and throws.
   */
  reopen(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Appending, created 0640 when missing; never through a symbolic link at the path (whoever may write
 * the log's folder could point it at a file the server may write), and never a FIFO or a device:
 * O_NONBLOCK makes a FIFO without a reader fail instead of blocking the server.
 */
const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Opens `path` for appending, synchronously, so that a bad path fails here with one sentence rather than later in a stream. */
function openForAppend(path: string): Writable {
  let fd: number;
  try {
    fd = openSync(path, APPEND_FLAGS, 0o640);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP')
      throw usageError(`The access log ${path} is a symbolic link; it is written only to a regular file.`, 'Give the path of the file itself.');
    if (code === 'ENXIO') throw notRegular(path);
    throw describeFsError(err, path);
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw notRegular(path);
  }
  const stream = createWriteStream(path, { fd });
  // A write that fails (a full disk) must not take the server down: said once per file, lines are lost.
  stream.once('error', (err) => process.stderr.write(`depotkit: the access log ${path} cannot be written: ${errorMessage(err)}.\n`));
  stream.on('error', () => {});
  return stream;
}

function notRegular(path: string): Error {
  return usageError(`The access log ${path} is not a regular file; it is written only to one.`, "Give a file's path, or '-' for standard output.");
}

const ended = (out: Writable) => new Promise<void>((resolve) => out.end(resolve));

export function openAccessLog(options: AccessLogOptions): AccessLog {
  const format = options.format === 'json' ? formatJson : formatCombined;
  const toStdout = options.destination === '-';
  // Append mode: several workers share the file, each line is one write.
  let out: Writable = toStdout ? process.stdout : openForAppend(options.destination);
  return {
    write(record) {
      out.write(`${format(record)}\n`);
    },
    async reopen() {
      if (toStdout) return;
      const previous = out;
      out = openForAppend(options.destination);
      await ended(previous);
    },
    close() {
      if (toStdout) return Promise.resolve();
      return ended(out);
    },
  };
}
