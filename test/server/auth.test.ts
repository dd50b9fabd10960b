import { execFileSync } from 'node:child_process';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { parseHtpasswd, startDepotServer, type DepotServer } from '../../src/server/index.js';
import { DepotkitError } from '../../src/util/errors.js';
import { useTempDir } from '../helpers/temp.js';
import { basic, fetchRaw, makePki, writeTree, type TestPki } from './helpers.js';

const CATALOG = `/${DEPOT_PATHS.catalog}`;
const HCL = `/${DEPOT_PATHS.hclAll}`;

describe('Basic auth', () => {
  let pki: TestPki;
  let root: string;
  const tmp = useTempDir();
  const servers: DepotServer[] = [];

  beforeAll(async () => {
    pki = await makePki();
    root = await writeTree(join(tmp.dir, 'web'), { [DEPOT_PATHS.catalog]: '{"patches": {}}\n', [DEPOT_PATHS.hclAll]: '{"timestamp": 1}\n' });
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  async function serve(options: Partial<Parameters<typeof startDepotServer>[0]>): Promise<DepotServer> {
    const s = await startDepotServer({ root, host: '127.0.0.1', port: 0, tls: { certPem: pki.certPem, keyPem: pki.keyPem }, ...options });
    servers.push(s);
    return s;
  }
  const req = (s: DepotServer, path: string, method: string, auth?: string) =>
    fetchRaw(s.url, path, { method, ca: pki.caCertPem, headers: auth ? { Authorization: auth } : {} });

  it('asks HEAD and GET alike for credentials: 401 with WWW-Authenticate without or with wrong ones', async () => {
    const s = await serve({ auth: { user: 'depot', password: 's3cret pass' } });
    for (const method of ['HEAD', 'GET']) {
      for (const auth of [undefined, basic('depot', 'wrong'), basic('other', 's3cret pass'), 'Basic !!!', 'Bearer abc', basic('depot', 's3cret pass ')]) {
        const r = await req(s, CATALOG, method, auth);
        expect(r.status, `${method} ${auth}`).toBe(401);
        expect(r.headers['www-authenticate']).toMatch(/^Basic realm="depot"/);
      }
      const ok = await req(s, CATALOG, method, basic('depot', 's3cret pass'));
      expect(ok.status).toBe(200);
      expect(ok.headers['content-length']).toBe('16');
    }
    // A password may contain colons: only the first one separates the user.
    const colon = await serve({ auth: { user: 'u', password: 'a:b:c' } });
    expect((await req(colon, CATALOG, 'GET', basic('u', 'a:b:c'))).status).toBe(200);
  });

  it('accepts every htpasswd hash kind: $2a$, $2b$, $2y$ (bcrypt) and $apr1$ (made by openssl)', async () => {
    const apr1 = execFileSync('openssl', ['passwd', '-apr1', 'pw-apr1'], { encoding: 'utf8' }).trim();
    const b = bcrypt.hashSync('pw-2b', 4);
    const lines = [
      '# users of the depot',
      `alice:${bcrypt.hashSync('pw-2a', 4).replace(/^\$2b\$/, '$2a$')}`,
      `bob:${b}`,
      `carol:${bcrypt.hashSync('pw-2y', 4).replace(/^\$2b\$/, '$2y$')}`,
      `dave:${apr1}`,
      '',
    ];
    const file = join(tmp.dir, 'htpasswd');
    await writeFile(file, lines.join('\n'));
    const s = await serve({ auth: { htpasswdFile: file } });
    for (const [user, pw] of [
      ['alice', 'pw-2a'],
      ['bob', 'pw-2b'],
      ['carol', 'pw-2y'],
      ['dave', 'pw-apr1'],
    ] as const) {
      expect((await req(s, CATALOG, 'HEAD', basic(user, pw))).status, user).toBe(200);
      // Twice: the second answer may come from the cache of successful checks.
      expect((await req(s, CATALOG, 'GET', basic(user, pw))).status, user).toBe(200);
      expect((await req(s, CATALOG, 'GET', basic(user, `${pw}x`))).status, user).toBe(401);
    }
    expect((await req(s, CATALOG, 'GET', basic('mallory', 'pw-2b'))).status).toBe(401);
    // A removed user is locked out after a reload, even with a cached success.
    await writeFile(file, lines.filter((l) => !l.startsWith('bob:')).join('\n'));
    await s.reloadTls();
    expect((await req(s, CATALOG, 'GET', basic('bob', 'pw-2b'))).status).toBe(401);
    expect((await req(s, CATALOG, 'GET', basic('dave', 'pw-apr1'))).status).toBe(200);
  });

  it('refuses htpasswd entries it cannot verify safely, naming the line', () => {
    expect(() => parseHtpasswd('u:plaintext\n', 'f')).toThrow(/f line 1 \(user u\).*not accepted/);
    expect(() => parseHtpasswd('u:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n', 'f')).toThrow(DepotkitError);
    expect(() => parseHtpasswd('# only a comment\n', 'f')).toThrow(/no users/);
    expect(() => parseHtpasswd('nocolon\n', 'f')).toThrow(/not "user:hash"/);
  });

  it('leaves PROD/vsan/hcl open with openHcl, and only that', async () => {
    const s = await serve({ auth: { user: 'u', password: 'p' }, openHcl: true });
    expect((await req(s, HCL, 'HEAD')).status).toBe(200);
    expect((await req(s, HCL, 'GET')).body.toString()).toContain('timestamp');
    expect((await req(s, CATALOG, 'GET')).status).toBe(401);
    const closed = await serve({ auth: { user: 'u', password: 'p' } });
    expect((await req(closed, HCL, 'GET')).status).toBe(401);
  });

  describe('open prefixes', () => {
    const UMDS = 'umds-patch-store';
    let tree: string;
    beforeAll(async () => {
      tree = await writeTree(join(tmp.dir, 'open'), {
        [DEPOT_PATHS.catalog]: '{"patches": {}}\n',
        [DEPOT_PATHS.hclAll]: '{"timestamp": 1}\n',
        [`${UMDS}/hostupdate/index.xml`]: '<index/>\n',
        [`${UMDS}-secret/key.txt`]: 'secret\n',
        'umds/x.txt': 'x\n',
        'PROD/umds-store/vib.txt': 'vib\n',
      });
      // A folder symlink under the open prefix into the protected tree, a dangling one, and an open prefix that is
      // itself a symlink to a folder inside the root.
      await symlink('../PROD/metadata', join(tree, UMDS, 'meta'));
      await symlink('../PROD/metadata/missing.json', join(tree, UMDS, 'dangling.json'));
      await symlink('PROD/umds-store', join(tree, 'store-link'));
    });
    const statuses = async (s: DepotServer, paths: string[], method = 'GET') =>
      Promise.all(paths.map(async (p) => [p, (await req(s, p, method)).status] as const));

    it('leaves a prefix open on HEAD and GET, by whole segments, while the rest needs credentials', async () => {
      const s = await serve({ root: tree, auth: { user: 'u', password: 'p' }, openPrefixes: [UMDS, 'store-link/'] });
      for (const method of ['HEAD', 'GET']) {
        expect(await statuses(s, [`/${UMDS}/hostupdate/index.xml`, `/${UMDS}-secret/key.txt`, '/umds/x.txt', CATALOG, HCL], method)).toEqual([
          [`/${UMDS}/hostupdate/index.xml`, 200],
          [`/${UMDS}-secret/key.txt`, 401],
          ['/umds/x.txt', 401],
          [CATALOG, 401],
          [HCL, 401],
        ]);
      }
      expect((await req(s, `/${UMDS}/hostupdate/index.xml`, 'GET')).body.toString()).toBe('<index/>\n');
      // Nothing there: 404 without credentials inside the open prefix (no listing of its folders), 401 outside.
      expect(await statuses(s, [`/${UMDS}/nothing.xml`, `/${UMDS}/hostupdate/`, `/${UMDS}`, '/PROD/nothing.json', '/nothing/x'])).toEqual([
        [`/${UMDS}/nothing.xml`, 404],
        [`/${UMDS}/hostupdate/`, 404],
        [`/${UMDS}`, 404],
        ['/PROD/nothing.json', 401],
        ['/nothing/x', 401],
      ]);
      // Through a folder symlink into the protected tree: protected, whether the file is there or not; a dangling link too.
      expect(
        await statuses(s, [`/${UMDS}/meta/productVersionCatalog/v1/productVersionCatalog.json`, `/${UMDS}/meta/nothing.json`, `/${UMDS}/dangling.json`]),
      ).toEqual([
        [`/${UMDS}/meta/productVersionCatalog/v1/productVersionCatalog.json`, 401],
        [`/${UMDS}/meta/nothing.json`, 401],
        [`/${UMDS}/dangling.json`, 401],
      ]);
      // A prefix that is a symlink opens the folder it leads to, under either name.
      expect(await statuses(s, ['/store-link/vib.txt', '/PROD/umds-store/vib.txt'])).toEqual([
        ['/store-link/vib.txt', 200],
        ['/PROD/umds-store/vib.txt', 200],
      ]);
      // The open files are served with credentials too, and the rest with them.
      expect((await req(s, `/${UMDS}/hostupdate/index.xml`, 'GET', basic('u', 'p'))).status).toBe(200);
      expect((await req(s, CATALOG, 'GET', basic('u', 'p'))).status).toBe(200);
      // The same with users from an htpasswd file.
      const file = join(tmp.dir, 'open.htpasswd');
      await writeFile(file, `u:${bcrypt.hashSync('p', 4)}\n`);
      const h = await serve({ root: tree, auth: { htpasswdFile: file }, openPrefixes: [UMDS] });
      expect(await statuses(h, [`/${UMDS}/hostupdate/index.xml`, CATALOG])).toEqual([
        [`/${UMDS}/hostupdate/index.xml`, 200],
        [CATALOG, 401],
      ]);
      expect((await req(h, CATALOG, 'GET', basic('u', 'p'))).status).toBe(200);
    });

    it('openHcl is openPrefixes [PROD/vsan/hcl]', async () => {
      const paths = [HCL, `/${DEPOT_PATHS.hclDir}`, `/${DEPOT_PATHS.hclDir}/nothing.json`, '/PROD/vsan/hcl-other/x', CATALOG, `/${UMDS}/hostupdate/index.xml`];
      const hcl = await serve({ root: tree, auth: { user: 'u', password: 'p' }, openHcl: true });
      const prefix = await serve({ root: tree, auth: { user: 'u', password: 'p' }, openPrefixes: [DEPOT_PATHS.hclDir] });
      for (const method of ['HEAD', 'GET']) {
        const a = await statuses(hcl, paths, method);
        expect(a).toEqual(await statuses(prefix, paths, method));
        expect(a.map(([, status]) => status)).toEqual([200, 404, 404, 401, 401, 401]);
      }
    });

    it('refuses a prefix that is absolute, climbs, is hidden, not normalised, or leads to the root', async () => {
      for (const bad of ['/umds', '../x', 'a/../b', '.depotkit', 'PROD/.hidden', 'a//b', './a', 'a/./b', '', '/', 'a\\b']) {
        await expect(serve({ root: tree, auth: { user: 'u', password: 'p' }, openPrefixes: [bad] }), bad).rejects.toThrow(DepotkitError);
      }
      await symlink('.', join(tree, 'root-link'));
      await expect(serve({ root: tree, auth: { user: 'u', password: 'p' }, openPrefixes: ['root-link'] })).rejects.toThrow(/web root itself/);
    });
  });

  it('keeps a symlink under an open prefix that points into the protected tree protected', async () => {
    const linked = await writeTree(join(tmp.dir, 'linked'), { [DEPOT_PATHS.catalog]: '{"patches": {}}\n', [DEPOT_PATHS.hclAll]: '{"timestamp": 1}\n' });
    await symlink('../../metadata/productVersionCatalog/v1/productVersionCatalog.json', join(linked, DEPOT_PATHS.hclDir, 'leak.json'));
    const s = await serve({ root: linked, auth: { user: 'u', password: 'p' }, openHcl: true });
    for (const method of ['HEAD', 'GET']) {
      const anonymous = await req(s, `/${DEPOT_PATHS.hclDir}/leak.json`, method);
      expect(anonymous.status, method).toBe(401);
      expect(anonymous.body.toString()).not.toContain('patches');
      // With credentials the link is served like any file inside the root.
      expect((await req(s, `/${DEPOT_PATHS.hclDir}/leak.json`, method, basic('u', 'p'))).status, method).toBe(200);
    }
    expect((await req(s, HCL, 'GET')).status).toBe(200);
  });

  it('writes an access log, combined or JSON, that never holds a password', async () => {
    const combined = join(tmp.dir, 'access.log');
    const json = join(tmp.dir, 'access.jsonl');
    const a = await serve({ auth: { user: 'depot', password: 'Pa55-word' }, accessLog: { destination: combined } });
    const j = await serve({ auth: { user: 'depot', password: 'Pa55-word' }, accessLog: { destination: json, format: 'json' } });
    for (const s of [a, j]) {
      await req(s, CATALOG, 'HEAD', basic('depot', 'Pa55-word'));
      await req(s, CATALOG, 'GET', basic('depot', 'wrong-Pa55'));
      await fetchRaw(s.url, CATALOG, { ca: pki.caCertPem, headers: { Authorization: basic('depot', 'Pa55-word'), 'User-Agent': 'agent "quoted"\tx' } });
    }
    await a.close();
    await j.close();
    const text = await readFile(combined, 'utf8');
    const lines = text.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^127\.0\.0\.1 - depot \[\d\d\/\w{3}\/\d{4}:\d\d:\d\d:\d\d \+0000\] "HEAD \/PROD\/metadata\/productVersionCatalog\/v1\/productVersionCatalog\.json HTTP\/1\.1" 200 0 "-" "-"$/,
    );
    expect(lines[1]).toMatch(/ - - \[.*\] "GET .*" 401 /);
    expect(lines[2]).toMatch(/" 200 16 "-" "agent \\"quoted\\"\\x09x"$/);
    const records = (await readFile(json, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.map((r) => [r.method, r.status, r.user])).toEqual([
      ['HEAD', 200, 'depot'],
      ['GET', 401, null],
      ['GET', 200, 'depot'],
    ]);
    for (const logged of [text, await readFile(json, 'utf8')]) {
      expect(logged).not.toMatch(/Pa55|wrong|Basic |ZGVwb3Q/);
    }
  });
});
