import { randomBytes } from 'node:crypto';
import { mkdir, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS, TEMP_PREFIX } from '../../src/constants.js';
import { startDepotServer, type DepotServer } from '../../src/server/index.js';
import { tempDir } from '../helpers/temp.js';
import { fetchRaw, makePki, writeTree, type TestPki } from './helpers.js';

const BLOB = randomBytes(300_000);
const CATALOG = '{"patches": {}}\n';

describe('static files over HTTPS', () => {
  let pki: TestPki;
  let server: DepotServer;
  let cleanup: () => Promise<void>;
  let outside: string;

  const get = (path: string, headers: Record<string, string> = {}, method = 'GET') => fetchRaw(server.url, path, { method, headers, ca: pki.caCertPem });

  beforeAll(async () => {
    pki = await makePki();
    const t = await tempDir();
    cleanup = t.cleanup;
    const root = join(t.dir, 'web');
    outside = join(t.dir, 'secret.txt');
    await writeFile(outside, 'outside the root\n');
    await writeTree(root, {
      [DEPOT_PATHS.catalog]: CATALOG,
      'PROD/COMP/VCENTER/VMware-VCSA-all-9.0.0.0.1.iso': BLOB,
      'PROD/COMP/VCENTER/.hidden': 'dotfile',
      [`PROD/COMP/VCENTER/${TEMP_PREFIX}abc-part.iso`]: 'partial',
      'PROD/.depotkit/verified.json': '{}',
      'PROD/empty.bin': '',
    });
    await symlink(outside, join(root, 'PROD/escape.txt'));
    await symlink(join(t.dir, '..'), join(root, 'PROD/up'));
    await symlink(join(root, DEPOT_PATHS.catalog), join(root, 'PROD/inside-link.json'));
    // Sparse: 5 GiB of size, no disk used.
    await mkdir(join(root, 'PROD/COMP/ESX_HOST'), { recursive: true });
    await writeFile(join(root, 'PROD/COMP/ESX_HOST/huge.iso'), '');
    await truncate(join(root, 'PROD/COMP/ESX_HOST/huge.iso'), 5 * 1024 ** 3 + 7);
    server = await startDepotServer({ root, host: '127.0.0.1', port: 0, tls: { certPem: pki.certPem, keyPem: pki.keyPem } });
  });
  afterAll(async () => {
    await server?.close();
    await cleanup?.();
  });

  it('serves a file with validators, and HEAD gives exactly the same headers', async () => {
    const path = '/PROD/COMP/VCENTER/VMware-VCSA-all-9.0.0.0.1.iso';
    const g = await get(path);
    const h = await get(path, {}, 'HEAD');
    expect(g.status).toBe(200);
    expect(g.body.equals(BLOB)).toBe(true);
    expect(h.body.length).toBe(0);
    const strip = (hs: Record<string, unknown>) => ({ ...hs, date: undefined });
    expect(strip(h.headers)).toEqual(strip(g.headers));
    expect(g.headers['content-length']).toBe(String(BLOB.length));
    expect(g.headers['content-type']).toBe('application/octet-stream');
    expect(g.headers['accept-ranges']).toBe('bytes');
    expect(g.headers.etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    expect(Date.parse(g.headers['last-modified']!)).not.toBeNaN();
  });

  it('serves JSON as application/json, and the catalog through a symlink inside the root', async () => {
    const r = await get(`/${DEPOT_PATHS.catalog}`);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.body.toString()).toBe(CATALOG);
    expect((await get('/PROD/inside-link.json')).body.toString()).toBe(CATALOG);
  });

  it('gives the right Content-Length above 4 GiB and serves its last bytes by Range', async () => {
    const size = 5 * 1024 ** 3 + 7;
    const h = await get('/PROD/COMP/ESX_HOST/huge.iso', {}, 'HEAD');
    expect(h.headers['content-length']).toBe(String(size));
    const tail = await get('/PROD/COMP/ESX_HOST/huge.iso', { Range: 'bytes=-10' });
    expect(tail.status).toBe(206);
    expect(tail.headers['content-range']).toBe(`bytes ${size - 10}-${size - 1}/${size}`);
    expect(tail.body.equals(Buffer.alloc(10))).toBe(true);
  });

  it('answers single ranges: closed, open-ended and suffix; 416 past the end; 200 for several ranges', async () => {
    const path = '/PROD/COMP/VCENTER/VMware-VCSA-all-9.0.0.0.1.iso';
    const closed = await get(path, { Range: 'bytes=100-199' });
    expect(closed.status).toBe(206);
    expect(closed.headers['content-range']).toBe(`bytes 100-199/${BLOB.length}`);
    expect(closed.headers['content-length']).toBe('100');
    expect(closed.body.equals(BLOB.subarray(100, 200))).toBe(true);
    const open = await get(path, { Range: `bytes=${BLOB.length - 5}-` });
    expect(open.body.equals(BLOB.subarray(BLOB.length - 5))).toBe(true);
    const suffix = await get(path, { Range: 'bytes=-1000' });
    expect(suffix.status).toBe(206);
    expect(suffix.body.equals(BLOB.subarray(BLOB.length - 1000))).toBe(true);
    const longSuffix = await get(path, { Range: `bytes=-${BLOB.length * 2}` });
    expect(longSuffix.body.equals(BLOB)).toBe(true);
    const beyond = await get(path, { Range: `bytes=${BLOB.length}-` });
    expect(beyond.status).toBe(416);
    expect(beyond.headers['content-range']).toBe(`bytes */${BLOB.length}`);
    const several = await get(path, { Range: 'bytes=0-1,5-6' });
    expect(several.status).toBe(200);
    expect(several.body.length).toBe(BLOB.length);
    const headRange = await get(path, { Range: 'bytes=0-9' }, 'HEAD');
    expect(headRange.status).toBe(206);
    expect(headRange.headers['content-length']).toBe('10');
  });

  it('applies a Range only while If-Range still names the file', async () => {
    const path = '/PROD/COMP/VCENTER/VMware-VCSA-all-9.0.0.0.1.iso';
    const { headers } = await get(path, {}, 'HEAD');
    const byTag = await get(path, { Range: 'bytes=0-9', 'If-Range': headers.etag! });
    expect(byTag.status).toBe(206);
    const byDate = await get(path, { Range: 'bytes=0-9', 'If-Range': headers['last-modified']! });
    expect(byDate.status).toBe(206);
    const stale = await get(path, { Range: 'bytes=0-9', 'If-Range': '"0-0"' });
    expect(stale.status).toBe(200);
    expect(stale.body.length).toBe(BLOB.length);
    const staleDate = await get(path, { Range: 'bytes=0-9', 'If-Range': new Date(0).toUTCString() });
    expect(staleDate.status).toBe(200);
  });

  it('answers 304 to a matching If-None-Match or a later If-Modified-Since', async () => {
    const path = `/${DEPOT_PATHS.catalog}`;
    const { headers } = await get(path);
    const byTag = await get(path, { 'If-None-Match': `"x", ${headers.etag}` });
    expect(byTag.status).toBe(304);
    expect(byTag.body.length).toBe(0);
    expect(byTag.headers.etag).toBe(headers.etag);
    expect((await get(path, { 'If-None-Match': '"other"' })).status).toBe(200);
    expect((await get(path, { 'If-Modified-Since': headers['last-modified']! })).status).toBe(304);
    expect((await get(path, { 'If-Modified-Since': new Date(0).toUTCString() })).status).toBe(200);
    // If-None-Match wins over If-Modified-Since.
    expect((await get(path, { 'If-None-Match': '"other"', 'If-Modified-Since': headers['last-modified']! })).status).toBe(200);
  });

  it('refuses every traversal form with 400 or 404 and never sends a file', async () => {
    const forms = [
      '/PROD/../../secret.txt',
      '/../secret.txt',
      '/PROD/%2e%2e/%2e%2e/secret.txt',
      '/PROD/%2E%2E/%2E%2E/secret.txt',
      '/PROD/..%2f..%2fsecret.txt',
      '/PROD/%2e%2e%2f%2e%2e%2fsecret.txt',
      '/PROD/..\\..\\secret.txt',
      '/PROD/%5c..%5c..%5csecret.txt',
      '/PROD/metadata%00.json',
      '/PROD/%252e%252e/%252e%252e/secret.txt',
      '/PROD/%c0%ae%c0%ae/secret.txt',
      '/PROD/./COMP',
      '/PROD/escape.txt',
      '/PROD/up/secret.txt',
      '//etc/passwd',
      '/PROD/%',
    ];
    for (const form of forms) {
      const r = await get(form);
      expect([400, 404], form).toContain(r.status);
      expect(r.body.toString(), form).not.toContain('outside the root');
    }
  });

  it('never serves dotfiles, temporary files, the toolkit folder or directory listings', async () => {
    for (const path of [
      '/PROD/COMP/VCENTER/.hidden',
      `/PROD/COMP/VCENTER/${TEMP_PREFIX}abc-part.iso`,
      '/PROD/.depotkit/verified.json',
      '/PROD/%2edepotkit/verified.json',
      '/PROD',
      '/PROD/COMP/VCENTER/',
    ]) {
      const r = await get(path);
      expect(r.status, path).toBe(404);
    }
    // The root is the status page, which names only what the catalog names (here nothing): no listing.
    const root = await get('/');
    expect(root.status).toBe(200);
    expect(root.headers['content-type']).toBe('text/html; charset=utf-8');
    for (const name of ['VMware-VCSA-all', '.hidden', TEMP_PREFIX, 'verified.json', 'empty.bin', 'escape.txt', 'huge.iso'])
      expect(root.body.toString(), name).not.toContain(name);
  });

  it('allows GET and HEAD only: 405 with Allow', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']) {
      const r = await get(`/${DEPOT_PATHS.catalog}`, {}, method);
      expect(r.status, method).toBe(405);
      expect(r.headers.allow).toBe('GET, HEAD');
    }
  });

  it('serves an empty file', async () => {
    const r = await get('/PROD/empty.bin');
    expect(r.status).toBe(200);
    expect(r.headers['content-length']).toBe('0');
  });
});
