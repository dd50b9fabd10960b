import { X509Certificate } from 'node:crypto';
import { mkdir, rm, stat, truncate, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS, REQUIRED_COMPONENTS, SERVE_HEALTH_BODIES, UMDS_PATCH_STORE_DIR, VCENTER_UPGRADE_METADATA_DIR } from '../../src/constants.js';
import { upgradeMetadataPaths } from '../../src/depot/upgrade-metadata.js';
import { startDepotServer, type DepotServer, type DepotServerOptions } from '../../src/server/index.js';
import { statusData } from '../../src/server/status-data.js';
import { renderStatusPage } from '../../src/server/status-page.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { basic, fetchRaw, spawnServe, writeTree, type ServeChild } from './helpers.js';
import { demoDepot, STATUS_JSON_SCHEMA, writePki } from './status-helpers.js';

const PASSWORD = 'Status-Page-Secret-42';
const VCENTER_ISO = 'PROD/COMP/VCENTER/VMware-VCSA-all-9.0.0.0.24755230.iso';
const NSX_OVA = 'PROD/COMP/NSX_T_MANAGER/nsx-unified-appliance-9.0.0.0.24733065.ova';

describe('the status page data and its HTML (library)', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let pki: Awaited<ReturnType<typeof writePki>>;

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('depotkit-status-'));
    pki = await writePki(join(dir, 'pki'));
  });
  afterAll(() => cleanup());

  it('lists every release and component the manifest and catalog name, with their files present', async () => {
    const root = join(dir, 'complete');
    await demoDepot(root);
    const data = await statusData(root, { certPem: pki.chainPem, url: 'https://depot.lab.local:8443', auth: { user: 'depot' } });
    expect(data.catalog.state).toBe('ok');
    expect(data.grouping).toBe('manifest');
    expect(data.releases.map((r) => r.version)).toEqual(['9.0.0.0']);
    const names = data.releases[0]!.components.map((c) => c.name);
    for (const c of REQUIRED_COMPONENTS) expect(names).toContain(c);
    expect(data.summary).toMatchObject({ complete: true, missing: 0, wrongSize: 0, unreadable: 0 });
    expect(data.summary.files).toBe(data.summary.present);
    expect(data.releases[0]!.complete).toBe(true);
    expect(data.hcl.state).toBe('ok');
    // The toolkit's chain ends with its CA: that is the certificate to import, and the one /ca.pem serves.
    expect(data.ca.certificate?.isCa).toBe(true);
    expect(data.ca.pem).toBe(new X509Certificate(pki.caCertPem).toString());
    expect(data.certificate?.dns).toEqual(['depot.lab.local', 'localhost']);
    expect(data.certificate?.sha256).toBe(new X509Certificate(pki.chainPem).fingerprint256);
    expect(data.access.commands.check).toBe('depotkit check https://depot.lab.local:8443 --ca depot-ca.pem --user depot --password-file depot.pass');
    expect(data.access.commands.installerDepot).toContain(
      '--trust-ca depot-ca.pem --depot-url https://depot.lab.local:8443 --depot-user depot --depot-password-file depot.pass',
    );
  });

  it('lists the vCenter upgrade metadata the catalog does not name: the known files of UUID folders, nothing else', async () => {
    const root = join(dir, 'upgrades');
    await demoDepot(root);
    expect((await statusData(root, { url: 'http://depot.lab.local' })).upgradeMetadata).toEqual([]);
    const uuid = '0b6f5c1e-2d3a-4c5b-9e8f-7a6b5c4d3e2f';
    const [xml, sig] = upgradeMetadataPaths(uuid);
    await mkdir(join(root, VCENTER_UPGRADE_METADATA_DIR, uuid), { recursive: true });
    await writeFile(join(root, xml!), '<upgradeInfo/>');
    await writeFile(join(root, sig!), 'sig');
    // Neither another file in an upgrade folder nor a folder that is not a UUID is upgrade metadata.
    await writeFile(join(root, VCENTER_UPGRADE_METADATA_DIR, uuid, 'notes.txt'), 'x');
    await mkdir(join(root, VCENTER_UPGRADE_METADATA_DIR, 'not-an-upgrade'), { recursive: true });
    await writeFile(join(root, VCENTER_UPGRADE_METADATA_DIR, 'not-an-upgrade', 'upgrade_info.xml'), 'x');
    const data = await statusData(root, { url: 'http://depot.lab.local' });
    expect(data.upgradeMetadata).toEqual([xml, sig].sort());
    // The page says how much there is; a depot without any says so.
    expect(renderStatusPage(data)).toContain(`2 files in 1 upgrade folder under <code>${VCENTER_UPGRADE_METADATA_DIR}/</code>`);
    await rm(join(root, VCENTER_UPGRADE_METADATA_DIR), { recursive: true });
    expect(renderStatusPage(await statusData(root, { url: 'http://depot.lab.local' }))).toContain(`None under <code>${VCENTER_UPGRADE_METADATA_DIR}/</code>`);
  });

  it('marks a deleted binary missing and a short one with its size on disk; files hashed when placed and unchanged since', async () => {
    const root = join(dir, 'broken');
    await demoDepot(root, 1000);
    await rm(join(root, VCENTER_ISO));
    await truncate(join(root, NSX_OVA), 10);
    // What depot build remembers of a file it hashed: path, size, mtime, inode and SHA-256.
    const catalog = JSON.parse(await (await import('node:fs/promises')).readFile(join(root, DEPOT_PATHS.catalog), 'utf8')) as {
      patches: Record<string, { artifacts: { bundles: { binaries: { fileName: string; checksum: string }[] }[] } }[]>;
    };
    const sddc = catalog.patches.SDDC_MANAGER_VCF![0]!.artifacts.bundles[0]!.binaries[0]!;
    const sddcPath = join(root, 'PROD/COMP/SDDC_MANAGER_VCF', sddc.fileName);
    const info = await stat(sddcPath);
    await mkdir(join(root, '.depotkit'), { recursive: true });
    await writeFile(
      join(root, '.depotkit', 'verified.json'),
      JSON.stringify({ [sddcPath]: { size: info.size, mtimeMs: info.mtimeMs, ino: info.ino, sha256: sddc.checksum } }),
    );

    let data = await statusData(root, { certPem: pki.leafPem, url: 'https://depot.lab.local', auth: { htpasswd: true } });
    const files = data.releases.flatMap((r) => r.components.flatMap((c) => c.files));
    expect(files.find((f) => f.path === VCENTER_ISO)?.state).toBe('missing');
    expect(files.find((f) => f.path === NSX_OVA)).toMatchObject({ state: 'wrong-size', actualSize: 10, size: 1000 });
    expect(files.find((f) => f.name === sddc.fileName)).toMatchObject({ state: 'present', hashVerified: true });
    expect(files.filter((f) => f.hashVerified)).toHaveLength(1);
    expect(data.summary).toMatchObject({ complete: false, missing: 1, wrongSize: 1, hashVerified: 1 });
    expect(data.releases[0]!.complete).toBe(false);
    // A leaf alone names no CA: the page says so and nothing is served at /ca.pem.
    expect(data.ca.certificate).toBeNull();
    expect(data.ca.pem).toBeUndefined();
    expect(data.ca.unknownReason).toMatch(/only the server certificate/);
    expect(data.access.caPath).toBeUndefined();
    expect(data.access.commands.check).toBe('depotkit check https://depot.lab.local --ca <CA certificate file> --user <user> --password-file depot.pass');
    const html = renderStatusPage(data);
    expect(html).toContain('✗ missing');
    expect(html).toContain('✗ wrong size: 10 B on disk');
    expect(html).toContain('present, content verified');
    expect(html).not.toContain('href="/ca.pem"');

    // A file changed since it was hashed is no longer vouched for.
    await utimes(sddcPath, new Date(), new Date(Date.now() - 3_600_000));
    data = await statusData(root, { url: 'http://depot.lab.local:8080' });
    expect(data.summary.hashVerified).toBe(0);
    expect(data.certificate).toBeNull();
    expect(data.access.commands.check).toBe('depotkit check http://depot.lab.local:8080');
    expect(data.access.commands.installerDepot).not.toContain('--trust-ca');
  });

  it('escapes every name a hostile catalog or manifest carries, and refuses names that would leave the depot', async () => {
    const root = join(dir, 'hostile');
    const evil = '<img src=x onerror=alert(1)>"\'&.iso';
    await writeTree(root, {
      [DEPOT_PATHS.catalog]: JSON.stringify({
        patches: {
          VCENTER: [
            {
              productVersion: '9.0.0.0.1"><script>alert(1)</script>',
              releaseDate: '<b>today</b>',
              artifacts: { bundles: [{ name: 'b', type: 'INSTALL', binaries: [{ fileName: evil, size: 3, checksum: 'a'.repeat(64) }] }] },
            },
          ],
        },
      }),
      [DEPOT_PATHS.manifest]: JSON.stringify({
        releases: [
          {
            version: '9.0</h3><script>alert(2)</script>',
            releaseDate: '<i>x</i>',
            bom: [{ name: 'VCENTER', version: '9.0.0.0.1"><script>alert(1)</script>' }],
          },
        ],
      }),
      [`PROD/COMP/VCENTER/${evil}`]: 'abc',
    });
    const data = await statusData(root, { certPem: pki.chainPem, url: 'https://depot.lab.local', auth: { user: 'a<b>"c' } });
    expect(data.releases[0]!.components[0]!.files[0]).toMatchObject({ name: evil, state: 'present' });
    const html = renderStatusPage(data);
    // No tag from the data survives: each `<` of it is an entity.
    expect(html).not.toMatch(/<script|<img|<b>|<i>|onerror=alert\(1\)>/);
    expect(html).toContain('&#60;img src=x onerror=alert(1)&#62;&#34;&#39;&#38;.iso');
    expect(html).toContain('9.0&#60;/h3&#62;&#60;script&#62;alert(2)&#60;/script&#62;');
    // Command lines are a span per word (so that a narrow screen wraps between words): read without them.
    expect(html.replace(/<\/?span[^>]*>/g, '')).toContain('--user &#39;a&#60;b&#62;&#34;c&#39;');

    // A component that is not a folder name, or a file name with a slash, would be looked up outside the
    // component's folder: the catalog is refused and nothing of it is listed.
    for (const patches of [
      { '../../etc': [] },
      {
        VCENTER: [{ productVersion: '1', artifacts: { bundles: [{ binaries: [{ fileName: '../../../../etc/passwd', size: 1, checksum: 'a'.repeat(64) }] }] } }],
      },
    ]) {
      await writeFile(join(root, DEPOT_PATHS.catalog), JSON.stringify({ patches }));
      const refused = await statusData(root, { url: 'https://depot.lab.local' });
      expect(refused.catalog.state).toBe('invalid');
      expect(refused.summary).toMatchObject({ complete: false, files: 0 });
      expect(JSON.stringify(refused)).not.toContain('passwd"');
      expect(renderStatusPage(refused)).toContain('The installer cannot use this depot');
    }
  });
});

describe('depotkit serve: /, /healthz, /metrics and /ca.pem (the built CLI, and the library it runs)', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let root: string;
  let pki: Awaited<ReturnType<typeof writePki>>;
  const children: ServeChild[] = [];
  const servers: DepotServer[] = [];
  const auth = { Authorization: basic('depot', PASSWORD) };

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('depotkit-status-cli-'));
    root = join(dir, 'depot');
    await demoDepot(root);
    await writeTree(root, { [`${UMDS_PATCH_STORE_DIR}/hostupdate/index.xml`]: '<index/>\n' });
    pki = await writePki(join(dir, 'pki'));
    await writeFile(join(dir, 'password'), `${PASSWORD}\n`);
  });
  afterAll(async () => {
    for (const c of children) c.child.kill('SIGKILL');
    for (const s of servers) await s.close();
    await cleanup();
  });

  async function serve(args: string[]): Promise<ServeChild> {
    const s = await spawnServe([root, '--host', '127.0.0.1', '--port', '0', ...args]);
    children.push(s);
    return s;
  }

  async function serveHere(options: DepotServerOptions): Promise<DepotServer> {
    const s = await startDepotServer(options);
    servers.push(s);
    return s;
  }

  it('answers / behind auth as HTML or JSON (by Accept), /healthz and /ca.pem without, and still serves the depot', async () => {
    const s = await serve([
      '--cert',
      pki.chain,
      '--key',
      pki.key,
      '--user',
      'depot',
      '--password-file',
      join(dir, 'password'),
      '--workers',
      '2',
      '--open',
      UMDS_PATCH_STORE_DIR,
    ]);
    const ca = pki.caCertPem;
    const anonymous = await fetchRaw(s.url, '/', { ca });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toMatch(/^Basic /);
    expect((await fetchRaw(s.url, '/', { ca, headers: { Authorization: basic('depot', 'wrong') } })).status).toBe(401);

    const page = await fetchRaw(s.url, '/', { ca, headers: auth });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers.vary).toBe('Accept');
    const html = page.body.toString('utf8');
    expect(html).toMatch(/^<!doctype html>\n<html lang="en">/);
    for (const c of REQUIRED_COMPONENTS) expect(html).toContain(`<th scope="rowgroup" colspan="3" class="group">${c} <span class="version">9.0.0.0.`);
    expect(html).toContain(`<code>https://depot.lab.local:${s.port}</code>`);
    expect(html).not.toContain(PASSWORD);

    const head = await fetchRaw(s.url, '/', { ca, method: 'HEAD', headers: auth });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-length']).toBe(page.headers['content-length']);

    const json = await fetchRaw(s.url, '/', { ca, headers: { ...auth, Accept: 'application/json' } });
    expect(json.status).toBe(200);
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(json.body.toString()).not.toContain(PASSWORD);
    const report = JSON.parse(json.body.toString()) as Record<string, unknown>;
    const validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(STATUS_JSON_SCHEMA);
    expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
    expect(report).toMatchObject({
      summary: { complete: true },
      access: { url: `https://depot.lab.local:${s.port}`, auth: 'user', user: 'depot', openPrefixes: [UMDS_PATCH_STORE_DIR], caPath: '/ca.pem' },
    });
    // The name resolves only where the installer is: the page's check reaches the server by its address, and runs as pasted.
    const check = (report.access as { commands: { check: string } }).commands.check;
    expect(check).toBe(`depotkit check https://127.0.0.1:${s.port} --as-host depot.lab.local --ca depot-ca.pem --user depot --password-file depot.pass`);
    const pasted = join(dir, 'pasted');
    await mkdir(pasted, { recursive: true });
    await writeFile(join(pasted, 'depot-ca.pem'), ca);
    await writeFile(join(pasted, 'depot.pass'), `${PASSWORD}\n`, { mode: 0o600 });
    const ran = await runCli(check.split(' ').slice(1), { cwd: pasted });
    expect(ran.stderr).not.toMatch(/warning|error/i);
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    // A browser's Accept prefers HTML; a client that ranks JSON higher gets JSON.
    const browser = await fetchRaw(s.url, '/', { ca, headers: { ...auth, Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
    expect(browser.headers['content-type']).toMatch(/^text\/html/);
    const ranked = await fetchRaw(s.url, '/', { ca, headers: { ...auth, Accept: 'text/html;q=0.5, application/json' } });
    expect(ranked.headers['content-type']).toMatch(/^application\/json/);

    const health = await fetchRaw(s.url, '/healthz', { ca });
    expect(health.status).toBe(200);
    expect(health.body.toString()).toBe(SERVE_HEALTH_BODIES.ok);
    // Only the exact path is the probe: anything else is the depot's, behind auth.
    expect((await fetchRaw(s.url, '/healthz/', { ca })).status).toBe(401);
    expect((await fetchRaw(s.url, '/PROD/healthz', { ca })).status).toBe(401);

    const caPem = await fetchRaw(s.url, '/ca.pem', { ca });
    expect(caPem.status).toBe(200);
    expect(caPem.headers['content-type']).toBe('application/x-pem-file');
    const served = new X509Certificate(caPem.body);
    expect(served.ca).toBe(true);
    expect(served.fingerprint256).toBe(new X509Certificate(ca).fingerprint256);

    expect((await fetchRaw(s.url, '/metrics', { ca })).status).toBe(401);
    const metrics = await fetchRaw(s.url, '/metrics', { ca, headers: auth });
    expect(metrics.status).toBe(200);
    expect(metrics.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');

    // The depot is untouched: its files, the open prefix, no listing.
    expect((await fetchRaw(s.url, `/${DEPOT_PATHS.catalog}`, { ca, headers: auth })).status).toBe(200);
    expect((await fetchRaw(s.url, `/${DEPOT_PATHS.catalog}`, { ca })).status).toBe(401);
    expect((await fetchRaw(s.url, `/${UMDS_PATCH_STORE_DIR}/hostupdate/index.xml`, { ca })).status).toBe(200);
    expect((await fetchRaw(s.url, '/PROD/', { ca, headers: auth })).status).toBe(404);
    expect((await fetchRaw(s.url, '/', { ca, method: 'POST', headers: auth })).status).toBe(405);
  });

  // What the page says of the other ways to serve is the library's: served in this process (the flags that choose
  // them, --http and --metrics-open, are the built CLI's in test/server/cli.test.ts and status-metrics.test.ts).
  it('over plain HTTP without auth: the page says there is no certificate, /ca.pem is 404; metricsOpen opens only /metrics', async () => {
    const http = await serveHere({ root, host: '127.0.0.1', port: 0 });
    const page = await fetchRaw(http.url, '/');
    expect(page.status).toBe(200);
    expect(page.body.toString()).toContain('Served over plain HTTP');
    expect((await fetchRaw(http.url, '/ca.pem')).status).toBe(404);
    const report = JSON.parse((await fetchRaw(http.url, '/', { headers: { Accept: 'application/json' } })).body.toString()) as {
      access: { url: string; auth: string; commands: { check: string } };
    };
    expect(report.access).toMatchObject({ url: `http://127.0.0.1:${http.port}`, auth: 'none' });
    expect(report.access.commands.check).toBe(`depotkit check http://127.0.0.1:${http.port}`);

    // Users from an htpasswd file: the page names no user, /metrics opens with --metrics-open, / does not.
    await writeFile(join(dir, 'htpasswd'), `depot:${bcrypt.hashSync(PASSWORD, 4)}\n`);
    const open = await serveHere({
      root,
      host: '127.0.0.1',
      port: 0,
      tls: { certFile: pki.leaf, keyFile: pki.key },
      auth: { htpasswdFile: join(dir, 'htpasswd') },
      metricsOpen: true,
    });
    const ca = pki.caCertPem;
    expect((await fetchRaw(open.url, '/metrics', { ca })).status).toBe(200);
    expect((await fetchRaw(open.url, '/', { ca })).status).toBe(401);
    // The leaf alone names no CA: nothing is served for it, and the page says so.
    expect((await fetchRaw(open.url, '/ca.pem', { ca })).status).toBe(401);
    expect((await fetchRaw(open.url, '/ca.pem', { ca, headers: auth })).status).toBe(404);
    const html = (await fetchRaw(open.url, '/', { ca, headers: auth })).body.toString();
    expect(html).toContain("a user of the server's htpasswd file");
    expect(html).toContain('not known to this server');
  });
});
