import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS, SERVE_AUTH_REALM, UMDS_PATCH_STORE_DIR } from '../../src/constants.js';
import { checkDepot } from '../../src/check/check.js';
import { exportConfig, type ExportOptions } from '../../src/export/index.js';
import { onTheCommandLine } from '../cert/words.js';
import {
  APACHE,
  CADDY,
  HOST,
  JAVA,
  LINKED_CATALOG,
  NGINX,
  PASSWORD,
  SECRET_TEXT,
  USER,
  fetchRaw,
  javaProbe,
  fixtureForFile,
  startApacheSite,
  startCaddyfile,
  startNginxSite,
  type RunningServer,
} from './helpers.js';
import { freePort } from '../helpers/ports.js';

const CATALOG = `/${DEPOT_PATHS.catalog}`;
const HCL = `/${DEPOT_PATHS.hclAll}`;

/** Each exported configuration, started by the real server on a free port: how to find and start it. */
const SERVERS = [
  { server: 'nginx', binary: NGINX, file: 'depotkit.conf', start: startNginxSite },
  { server: 'apache', binary: APACHE, file: 'depotkit.conf', start: startApacheSite },
  { server: 'caddy', binary: CADDY, file: 'Caddyfile', start: startCaddyfile },
] as const;

const fixture = fixtureForFile();

describe.each(SERVERS)('depotkit export $server, run by the real server', ({ server, binary, file, start }) => {
  const running: RunningServer[] = [];
  let ca: string;
  let hclOpen: RunningServer;
  let closed: RunningServer;
  let outOpen: string;
  let exportWarnings: string;

  /** Exports (as export does; its command line is cli.test.ts) into a fresh folder, and starts the server on it. */
  async function exportAndStart(name: string, extra: Partial<ExportOptions>): Promise<{ server: RunningServer; out: string; warnings: string }> {
    const port = await freePort();
    const out = join(fixture.dir, `${server}-${name}`);
    const auth = { user: USER, password: PASSWORD };
    const report = await exportConfig({
      target: server,
      root: fixture.root,
      out,
      host: '127.0.0.1',
      port,
      cert: fixture.certFile,
      key: fixture.keyFile,
      auth,
      ...extra,
    });
    await mkdir(join(out, 'run'));
    const s = await start(join(out, file), port, join(out, 'run'));
    running.push(s);
    return { server: s, out, warnings: report.warnings.map(onTheCommandLine).join('\n') };
  }

  beforeAll(async () => {
    if (!binary) return;
    ca = await readFile(fixture.caFile, 'utf8');
    ({ server: hclOpen, out: outOpen, warnings: exportWarnings } = await exportAndStart('hcl', { openHcl: true, openPrefixes: [UMDS_PATCH_STORE_DIR] }));
    ({ server: closed } = await exportAndStart('closed', {}));
  });
  afterAll(async () => {
    for (const s of running) await s.stop();
  });

  describe.skipIf(!binary)(`with ${server} installed`, () => {
    it("the users file holds no password in clear (Apache's and Caddy's bcrypt at htpasswd -B's cost, 5), mode 0640", async () => {
      const users = join(outOpen, server === 'caddy' ? 'depotkit.users' : 'depotkit.htpasswd');
      const text = await readFile(users, 'utf8');
      expect(text).not.toContain(PASSWORD);
      expect(text).toMatch(server === 'nginx' ? /^depot:\$apr1\$/ : server === 'apache' ? /^depot:\$2y\$05\$/ : /^depot \$2b\$05\$/);
      expect((await stat(users)).mode & 0o777).toBe(0o640);
    });

    it('depotkit check accepts the depot through it', async () => {
      const result = await checkDepot(`https://127.0.0.1:${hclOpen.port}`, { asHost: HOST, caPems: [ca], user: USER, password: PASSWORD });
      expect(
        result.findings.filter((f) => f.severity === 'error'),
        await hclOpen.log(),
      ).toEqual([]);
      expect(result.accepted).toBe(true);
    });

    it.skipIf(!JAVA)("Java's TLS client (the installer's stack) gets HEAD then GET of the catalog, with the same length", async () => {
      const out = await javaProbe(fixture, closed.port);
      expect(out).toMatch(/^HEAD 200 \d+\nGET 200 \d+\n$/);
      const [head, get] = out
        .trim()
        .split('\n')
        .map((l) => l.split(' ')[2]);
      expect(head).toBe(get);
    });

    it("HEAD without credentials is 401 with the Basic challenge, as GET; with them, HEAD has GET's length and type", async () => {
      for (const method of ['HEAD', 'GET']) {
        const answer = await fetchRaw(closed.port, CATALOG, { ca, method });
        expect(answer.status).toBe(401);
        expect(String(answer.headers['www-authenticate'])).toMatch(new RegExp(`^Basic realm="${SERVE_AUTH_REALM}"`));
      }
      const head = await fetchRaw(closed.port, CATALOG, { ca, method: 'HEAD', auth: true });
      const get = await fetchRaw(closed.port, CATALOG, { ca, auth: true });
      expect(head.status).toBe(200);
      expect(get.status).toBe(200);
      expect(head.headers['content-length']).toBe(String(Buffer.byteLength(get.body, 'latin1')));
      expect(head.headers['content-type']).toMatch(/^application\/json/);
      expect(head.headers['content-encoding']).toBeUndefined();
      const sig = await fetchRaw(closed.port, `/${DEPOT_PATHS.catalogSig}`, { ca, method: 'HEAD', auth: true });
      expect(sig.status).toBe(200);
      expect(sig.headers['content-type']).toBe('application/octet-stream');
    });

    it('--status-page: a static copy of the status page at / behind the auth, the CA certificate at /ca.pem without', async () => {
      const { server: withPage, out } = await exportAndStart('status', { statusPage: true, openHcl: true });
      expect((await fetchRaw(withPage.port, '/', { ca })).status).toBe(401);
      const page = await fetchRaw(withPage.port, '/', { ca, auth: true });
      expect(page.status).toBe(200);
      expect(String(page.headers['content-type'])).toMatch(/^text\/html/);
      expect(String(page.headers['content-security-policy'])).toMatch(/^default-src 'none'/);
      expect(page.body).toBe(await readFile(join(out, 'status', 'index.html'), 'latin1'));
      expect(page.body).toContain('VCENTER');
      expect(page.body).toContain('href="/ca.pem"');
      const caPem = await fetchRaw(withPage.port, '/ca.pem', { ca });
      expect(caPem.status).toBe(200);
      expect(caPem.body.trim()).toBe(ca.trim());
      // The depot itself keeps its rules: the catalog needs credentials, the HCL is open as asked.
      expect((await fetchRaw(withPage.port, CATALOG, { ca })).status).toBe(401);
      expect((await fetchRaw(withPage.port, HCL, { ca })).status).toBe(200);
      expect(page.body).not.toContain(PASSWORD);
    });

    it('a wrong password is refused like none', async () => {
      const answer = await fetchRaw(closed.port, CATALOG, {
        ca,
        method: 'HEAD',
        headers: { authorization: `Basic ${Buffer.from(`${USER}:wrong`).toString('base64')}` },
      });
      expect(answer.status).toBe(401);
    });

    it('the HCL is open only when asked (--open-hcl); the catalog never is', async () => {
      expect((await fetchRaw(hclOpen.port, HCL, { ca })).status).toBe(200);
      expect((await fetchRaw(hclOpen.port, HCL, { ca, method: 'HEAD' })).status).toBe(200);
      expect((await fetchRaw(closed.port, HCL, { ca })).status).toBe(401);
      expect((await fetchRaw(closed.port, HCL, { ca, auth: true })).status).toBe(200);
      expect((await fetchRaw(hclOpen.port, CATALOG, { ca })).status).toBe(401);
    });

    it.each([
      // From the open HCL folder up into the protected metadata, raw and percent-encoded.
      '/PROD/vsan/hcl/../../metadata/productVersionCatalog/v1/productVersionCatalog.json',
      '/PROD/vsan/hcl/%2e%2e/%2e%2e/metadata/productVersionCatalog/v1/productVersionCatalog.json',
      '/PROD/vsan/hcl/%2E%2E%2F%2E%2E%2Fmetadata/productVersionCatalog/v1/productVersionCatalog.json',
      '/PROD/vsan/hcl/..%2f..%2fmetadata/productVersionCatalog/v1/productVersionCatalog.json',
      '/PROD/vsan/hcl/..\\..\\metadata/productVersionCatalog/v1/productVersionCatalog.json',
      '/PROD/vsan//hcl/../../metadata/productVersionCatalog/v1/productVersionCatalog.json',
    ])('refuses %s without credentials', async (path) => {
      const answer = await fetchRaw(hclOpen.port, path, { ca });
      expect(answer.status).not.toBe(200);
      expect(answer.body).not.toContain('"patches"');
    });

    it.each(['/../../../../etc/passwd', '/%2e%2e/%2e%2e/%2e%2e/etc/passwd', '/PROD/..%2f..%2f..%2f..%2fetc/passwd', '/..\\..\\..\\etc\\passwd'])(
      'never leaves the web root: %s',
      async (path) => {
        const answer = await fetchRaw(hclOpen.port, path, { ca, auth: true });
        expect(answer.status).not.toBe(200);
        expect(answer.body).not.toMatch(/root:.*:0:0:/);
      },
    );

    it.each(['/.secret', '/PROD/vsan/hcl/.hidden', '/PROD/.depotkit-tmp-0123-part.iso', '/.depotkit/verified.json', '/PROD/vsan/hcl/%2esecret/../.hidden'])(
      'never serves the dotfile %s, even with credentials or in the open folder',
      async (path) => {
        for (const auth of [true, false]) {
          const answer = await fetchRaw(hclOpen.port, path, { ca, auth });
          expect(answer.status).not.toBe(200);
          expect(answer.body).not.toContain(SECRET_TEXT);
        }
      },
    );

    it('warns about a symlink under an open prefix; nginx and Apache do not follow it, so it cannot lead into the protected tree', async () => {
      expect(exportWarnings).toContain(`${LINKED_CATALOG}: symlinks under the open prefix ${UMDS_PATCH_STORE_DIR}`);
      if (server === 'caddy') {
        // Caddy has no switch for this: the warning tells to replace the link with a copy.
        expect(exportWarnings).toContain('which Caddy follows without asking for credentials');
        return;
      }
      const answer = await fetchRaw(hclOpen.port, `/${LINKED_CATALOG}`, { ca });
      expect(answer.status).not.toBe(200);
      expect(answer.body).not.toContain('"patches"');
    });

    it('lists no folder and answers only GET and HEAD', async () => {
      for (const path of ['/', '/PROD/', '/PROD/COMP/VCENTER/', '/PROD/vsan/hcl/']) {
        const answer = await fetchRaw(hclOpen.port, path, { ca, auth: true });
        expect(answer.status).not.toBe(200);
        expect(answer.body).not.toMatch(/VMware-VCSA|all\.json|Index of/);
      }
      for (const method of ['POST', 'PUT', 'DELETE']) {
        expect((await fetchRaw(hclOpen.port, HCL, { ca, method, auth: true })).status).toBe(405);
      }
    });

    it('serves a binary whole and in ranges, as octet-stream', async () => {
      const path = '/PROD/COMP/VCENTER/';
      const catalog = JSON.parse((await fetchRaw(closed.port, CATALOG, { ca, auth: true })).body) as {
        patches: Record<string, Array<{ artifacts: { bundles: Array<{ binaries: Array<{ fileName: string; size: number }> }> } }>>;
      };
      const binary = catalog.patches.VCENTER![0]!.artifacts.bundles[0]!.binaries[0]!;
      const whole = await fetchRaw(closed.port, `${path}${binary.fileName}`, { ca, auth: true });
      expect(whole.status).toBe(200);
      expect(whole.headers['content-type']).toBe('application/octet-stream');
      expect(Buffer.byteLength(whole.body, 'latin1')).toBe(binary.size);
      const part = await fetchRaw(closed.port, `${path}${binary.fileName}`, { ca, auth: true, headers: { range: 'bytes=2-5' } });
      expect(part.status).toBe(206);
      expect(part.body).toBe(whole.body.slice(2, 6));
    });
  });
});
