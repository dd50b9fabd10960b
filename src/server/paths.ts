import { lstat, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { DEPOT_PATHS } from '../constants.js';
import { usageError } from '../util/errors.js';
import { isTempName } from '../util/fs.js';

/**
 * Why a request path is not served: `bad` is a malformed or hostile path (400), `hidden` one we never reveal (404).
 * `folder`: the path ends with a slash, so it names a folder, which is never served (no listing).
 */
export type PathVerdict = { ok: true; segments: string[]; path: string; folder: boolean } | { ok: false; status: 400 | 404 };

/**
 * The absolute form of a request target (`GET http://host/PROD/... HTTP/1.1`), which RFC 9112 (3.2.2) says a
 * server must accept; the origin server uses the host in it and ignores Host. This server has one site, so
 * only the path counts. The scheme and authority are cut off as written, without normalising the path.
 */
const ABSOLUTE_FORM = /^https?:\/\/[^/?#\s]*/i;

/**
 * Checks the path of a request target before it touches the file system: no
 * `..` or `.` segment (raw or percent-encoded), no backslash, no NUL, no
 * malformed encoding; dotfiles and the toolkit's temporary files are hidden.
 * `path` is the decoded path with a leading slash, for auth and logging.
 * The origin form (`/PROD/...`) and the absolute form (`http://host/PROD/...`)
 * are taken; anything else (`*`, `host:port`, other schemes) is a 400.
 */
export function parseRequestPath(url: string): PathVerdict {
  const absolute = ABSOLUTE_FORM.exec(url);
  const target = absolute ? url.slice(absolute[0].length) : url;
  const q = target.indexOf('?');
  let raw = q === -1 ? target : target.slice(0, q);
  if (absolute && raw === '') raw = '/';
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
  return { ok: true, segments, path: `/${segments.join('/')}${decoded.endsWith('/') && segments.length > 0 ? '/' : ''}`, folder: decoded.endsWith('/') };
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

/** A root-relative path, '/'-separated, of a real path inside `realRoot` ('' for the root itself). */
function relativeInside(realRoot: string, real: string): string | undefined {
  const rel = relative(realRoot, real);
  if (rel.startsWith('..') || isAbsolute(rel)) return undefined;
  return rel
    .split(sep)
    .filter((s) => s !== '')
    .join('/');
}

/**
 * Checks an open prefix (`openPrefixes`) and returns its one normal form:
 * relative to the web root, '/'-separated, without empty, `.` or `..`
 * segments, without a segment that starts with a dot (never served anyway),
 * backslash or NUL. One trailing slash is accepted and dropped. Throws a
 * one-sentence usage error naming `what` otherwise.
 */
export function normaliseOpenPrefix(text: string, what = 'The open prefix'): string {
  const path = text.endsWith('/') ? text.slice(0, -1) : text;
  const refuse = (why: string, fix?: string) => usageError(`${what} "${text}" ${why}.`, fix);
  if (path === '') throw refuse('names no path', `Give a folder under the web root, such as ${DEPOT_PATHS.hclDir}; to open everything, serve without auth.`);
  if (path.startsWith('/')) throw refuse('must be relative to the web root', `Write it as ${path.replace(/^\/+/, '') || '<folder>'}.`);
  if (path.includes('\\') || path.includes('\0')) throw refuse('holds a backslash or NUL; give a path with forward slashes');
  const segments = path.split('/');
  if (segments.includes('..')) throw refuse('holds a ".." segment; give the path below the web root itself');
  if (segments.some((s) => s === '' || s === '.')) {
    throw refuse('is not a normalised path', `Write it as ${segments.filter((s) => s !== '' && s !== '.').join('/') || '<folder>'}.`);
  }
  if (segments.some((s) => s.startsWith('.') || isTempName(s)))
    throw refuse('names a hidden file or folder (a segment starts with a dot), which is never served');
  return path;
}

/** Is `rel` (a root-relative resolved path) `prefix` itself or below it, by whole segments? */
export function isUnderPrefix(rel: string, prefix: string): boolean {
  return rel === prefix || rel.startsWith(`${prefix}/`);
}

/**
 * Where a request lands inside `realRoot`: the real file and its root-relative
 * path when it exists (as resolveInsideRoot decides), otherwise, with
 * `whereMissing`, the root-relative path it would have: the real path of its
 * deepest existing folder followed by the names that do not exist. `rel` is
 * undefined when the request leaves the root, lands on a hidden name, or
 * meets something in the way that exists but cannot be resolved (a dangling
 * symlink, a loop): then nobody can tell where it points.
 */
export async function locateInsideRoot(realRoot: string, segments: string[], whereMissing: boolean): Promise<{ real?: string; rel?: string }> {
  const real = await resolveInsideRoot(realRoot, segments);
  if (real) return { real, rel: relativeInside(realRoot, real) };
  if (!whereMissing) return {};
  for (let depth = segments.length - 1; depth >= 0; depth--) {
    let folder: string;
    try {
      folder = await realpath(join(realRoot, ...segments.slice(0, depth)));
    } catch {
      continue;
    }
    // The full path did not resolve inside the root: either it leaves the root or is hidden (then its folder
    // resolves, but the name exists), or the next name really is absent.
    const next = await lstat(join(folder, segments[depth]!)).then(
      () => true,
      () => false,
    );
    if (next) return {};
    const base = relativeInside(realRoot, folder);
    if (base === undefined || (base !== '' && base.split('/').some((s) => s.startsWith('.') || isTempName(s)))) return {};
    return { rel: [base, ...segments.slice(depth)].filter((s) => s !== '').join('/') };
  }
  return {};
}
