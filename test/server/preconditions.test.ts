/**
 * If-Match and If-Unmodified-Since on GET and HEAD (RFC 9110 §13.1.1,
 * §13.1.4, the order of §13.2.2), with real requests to a real
 * `depotkit serve`: a client that resumes a download with If-Match must get
 * 412, not the bytes of another version of the file.
 */
import { utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { useTempDir } from '../helpers/temp.js';
import { fetchRaw, spawnServe, writeTree, type ServeChild } from './helpers.js';

const BODY = 'the catalog, and nothing else.\n';
/** The file's modification time: 2026-01-02T03:04:05Z. */
const MTIME = new Date('2026-01-02T03:04:05Z');
const PATH = `/${DEPOT_PATHS.catalog}`;

const tmp = useTempDir('depotkit-preconditions-');
let serve: ServeChild;
let etag: string;

beforeAll(async () => {
  const root = await writeTree(join(tmp.dir, 'web'), { [DEPOT_PATHS.catalog]: BODY });
  await utimes(join(root, DEPOT_PATHS.catalog), MTIME, MTIME);
  serve = await spawnServe([root, '--http', '--host', '127.0.0.1', '--port', '0', '--workers', '1']);
  etag = (await fetchRaw(serve.url, PATH)).headers.etag as string;
});
afterAll(async () => {
  serve?.child.kill('SIGTERM');
  await serve?.exited;
});

const ask = (headers: Record<string, string>, method = 'GET') => fetchRaw(serve.url, PATH, { method, headers });
const before = new Date(MTIME.getTime() - 1000).toUTCString();
const after = new Date(MTIME.getTime() + 1000).toUTCString();

describe('serve: If-Match and If-Unmodified-Since', () => {
  it('If-Match: the current tag, one of a list, or * answers the file; another tag, or the weak form of this one, 412', async () => {
    expect(etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    for (const value of [etag, `"other", ${etag}`, '*']) {
      const r = await ask({ 'If-Match': value });
      expect(r.status, value).toBe(200);
      expect(r.body.toString()).toBe(BODY);
    }
    for (const value of ['"other"', `W/${etag}`, '"other", "another"']) {
      const r = await ask({ 'If-Match': value });
      expect(r.status, value).toBe(412);
      expect(r.body.toString()).not.toContain(BODY);
    }
    expect((await ask({ 'If-Match': '"other"' }, 'HEAD')).status).toBe(412);
    // `*` needs a file there.
    expect((await fetchRaw(serve.url, `/${DEPOT_PATHS.manifest}`, { headers: { 'If-Match': '*' } })).status).toBe(404);
  });

  it('If-Unmodified-Since: a date before the modification answers 412, at or after it the file; a date that cannot be read is ignored', async () => {
    expect((await ask({ 'If-Unmodified-Since': before })).status).toBe(412);
    expect((await ask({ 'If-Unmodified-Since': before }, 'HEAD')).status).toBe(412);
    expect((await ask({ 'If-Unmodified-Since': MTIME.toUTCString() })).status).toBe(200);
    expect((await ask({ 'If-Unmodified-Since': after })).status).toBe(200);
    expect((await ask({ 'If-Unmodified-Since': 'yesterday' })).status).toBe(200);
  });

  it('If-Unmodified-Since is ignored when If-Match is present', async () => {
    expect((await ask({ 'If-Match': etag, 'If-Unmodified-Since': before })).status).toBe(200);
    expect((await ask({ 'If-Match': '"other"', 'If-Unmodified-Since': after })).status).toBe(412);
  });

  it('the preconditions come before the freshness (304) and before Range', async () => {
    expect((await ask({ 'If-Match': '"other"', 'If-None-Match': etag })).status).toBe(412);
    expect((await ask({ 'If-Unmodified-Since': before, 'If-Modified-Since': after })).status).toBe(412);
    expect((await ask({ 'If-Match': '"other"', Range: 'bytes=0-3' })).status).toBe(412);
    expect((await ask({ 'If-Unmodified-Since': before, Range: 'bytes=0-3' })).status).toBe(412);
    // Passed, they leave the rest as it was.
    expect((await ask({ 'If-Match': etag, 'If-None-Match': etag })).status).toBe(304);
    const partial = await ask({ 'If-Match': etag, Range: 'bytes=0-3' });
    expect(partial.status).toBe(206);
    expect(partial.body.toString()).toBe(BODY.slice(0, 4));
  });
});
