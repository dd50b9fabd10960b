import { realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { isTempName } from '../util/fs.js';

/** Why a request path is not served: `bad` is a malformed or hostile path (400), `hidden` one we never reveal (404). */
export type PathVerdict = { ok: true; segments: string[]; path: string } | { ok: false; status: 400 | 404 };

/**
 * Checks the path of a request URL before it touches the file system: no
 * `..` or `.` segment (raw or percent-encoded), no backslash, no NUL, no
 * malformed encoding; dotfiles and the toolkit's temporary files are hidden.
 * `path` is the decoded path with a leading slash, for auth and logging.
 */
export function parseRequestPath(url: string): PathVerdict {
  const q = url.indexOf('?');
  const raw = q === -1 ? url : url.slice(0, q);
  if (!raw.startsWith('/')) return { ok: false, status: 400 };
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return { ok: false, status: 400 };
  }
  if (decoded.includes('\\') || decoded.includes('\0')) return { ok: false, status: 400 };
  const segments = decoded.split('/').filter((s) => s !== '');
  for (const s of segments) {
    if (s === '.' || s === '..') return { ok: false, status: 400 };
    // A dotfile covers the toolkit's own folder (.depotkit) and its temporary files; isTempName says so explicitly.
    if (s.startsWith('.') || isTempName(s)) return { ok: false, status: 404 };
  }
  return { ok: true, segments, path: `/${segments.join('/')}` };
}

/**
 * The real path of a request inside `realRoot` (itself a realpath), or
 * undefined when it does not exist or resolves outside the root (a symlink
 * that leaves it) or onto a hidden name.
 */
export async function resolveInsideRoot(realRoot: string, segments: string[]): Promise<string | undefined> {
  let real: string;
  try {
    real = await realpath(join(realRoot, ...segments));
  } catch {
    return undefined;
  }
  const rel = relative(realRoot, real);
  if (rel === '') return real;
  if (rel.startsWith('..') || isAbsolute(rel)) return undefined;
  if (rel.split(sep).some((s) => s.startsWith('.') || isTempName(s))) return undefined;
  return real;
}
