import { cp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS, UMDS_PATCH_STORE_DIR } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { createCa, readCertificate, issueServerCert, splitPemBlocks, type CaMaterial } from '../../src/cert/index.js';
import { checkDepot, type CheckResult } from '../../src/check/check.js';
import { brokenServerCert } from '../helpers/certs.js';
import { runCli } from '../helpers/cli.js';
import { refusal } from '../helpers/output.js';
import { runMain } from '../cli/in-process.js';
import { normaliseOpenPrefix } from '../../src/server/paths.js';
import { tempDir } from '../helpers/temp.js';
import { NGINX, startNginx } from '../helpers/nginx.js';
import { startDepotServer } from '../../src/server/index.js';
import { readCatalogBinaries } from '../depot/helpers.js';
import { writeTree } from '../server/helpers.js';
import { onTheCommandLine } from './words.js';

const HOST = 'depot.test';
const USER = 'depot';
const PASSWORD = 'correct horse battery';
const STORE_FILE = `${UMDS_PATCH_STORE_DIR}/hostupdate/index.xml`;

let base: string;
let cleanup: () => Promise<void>;
let pristine: string;
let ca: CaMaterial;
let good: { certPem: string; keyPem: string };
let caFile: string;
let passwordFile: string;
let n = 0;

beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir());
  pristine = join(base, 'pristine');
  await makeDemoDepot(pristine, { binarySize: 4096 });
  ca = await createCa({ keySize: 2048 });
  // Both the name and the address the check connects to, as 9.1's fleet lifecycle wants them.
  const issued = await issueServerCert(ca, { dns: [HOST], ips: ['127.0.0.1'], keySize: 2048 });
  good = { certPem: issued.chainPem, keyPem: issued.keyPem };
  caFile = join(base, 'ca.pem');
  await writeFile(caFile, ca.certPem);
  passwordFile = join(base, 'password');
  await writeFile(passwordFile, `${PASSWORD}\n`);
});
afterAll(() => cleanup());

async function depotCopy(): Promise<string> {
  const dir = join(base, `depot-${n++}`);
  await cp(pristine, dir, { recursive: true });
  return dir;
}

interface Scenario {
  root?: string;
  cert?: { certPem: string; keyPem: string };
  openHead?: boolean;
  /** Path prefixes left without auth. */
  open?: string[];
}

interface ServerUnderTest {
  url: string;
  stop(): Promise<void>;
}

type Serve = (s: {
  root: string;
  certPem?: string;
  keyPem?: string;
  auth?: { user: string; password: string };
  openHead?: boolean;
  open?: string[];
}) => Promise<ServerUnderTest>;

/** The same faults are checked behind nginx (an independent server) and behind depotkit serve. */
const SERVERS: { name: string; serve: Serve; skip: boolean }[] = [
  { name: 'nginx', serve: (s) => startNginx({ ...s, openPaths: s.open }), skip: !NGINX },
  {
    name: 'depotkit serve',
    skip: false,
    serve: async (s) => {
      const server = await startDepotServer({
        root: s.root,
        host: '127.0.0.1',
        port: 0,
        tls: s.certPem && s.keyPem ? { certPem: s.certPem, keyPem: s.keyPem } : undefined,
        auth: s.auth,
        openPrefixes: s.open,
      });
      return { url: server.url, stop: () => server.close() };
    },
  },
];

let serve: Serve;

/** Serves a depot with the server under test and checks it. */
async function checkServed(s: Scenario, urlSuffix: string, options: Parameters<typeof checkDepot>[1]): Promise<CheckResult> {
  const server = await serve({ root: s.root ?? pristine, ...(s.cert ?? good), auth: { user: USER, password: PASSWORD }, openHead: s.openHead, open: s.open });
  try {
    return await checkDepot(`${server.url}${urlSuffix}`, { asHost: HOST, caPems: [ca.certPem], user: USER, password: PASSWORD, ...options });
  } finally {
    await server.stop();
  }
}

const ids = (r: CheckResult) => r.findings.filter((f) => f.severity !== 'info').map((f) => f.id);

describe.each(SERVERS)('depot check against $name', ({ name, serve: serveWith, skip }) => {
  beforeAll(() => {
    serve = serveWith;
  });
  if (skip) return it.skip(`${name} is not installed`);

  it('accepts a correct depot: trusted CA, SAN with the host, credentials, every binary', async () => {
    const result = await checkServed({}, '', { deep: true });
    expect(ids(result)).toEqual([]);
    expect(result.accepted).toBe(true);
    expect(result.stats.hashed).toBe(result.stats.binaries);
    expect(result.tls?.dnsNames).toEqual([HOST]);
  });

  it.each([
    ['no-san', 'cert.san.missing'],
    ['wrong-host', 'cert.san.host-missing'],
    ['ip-cn', 'cert.cn.ip'],
    ['expired', 'cert.expired'],
  ] as const)('a %s certificate gives %s and a rejection', async (kind, id) => {
    const result = await checkServed({ cert: await brokenServerCert(ca, kind, HOST) }, '', {});
    expect(ids(result)).toContain(id);
    expect(result.accepted).toBe(false);
    expect(result.findings.find((f) => f.id === id)!.installer).toContain('VMWARE_DEPOT_CONNECT_FAILURE');
  });

  it('without --ca it names the issuer to import and rejects', async () => {
    const result = await checkServed({}, '', { caPems: [] });
    const f = result.findings.find((x) => x.id === 'tls.ca.not-given')!;
    expect(f.severity).toBe('error');
    expect(f.evidence!.chainsToPublicRoot).toBe(false);
    expect(String(f.evidence!.issuer)).toContain('CN=');
  });

  it('tells a wrong password from missing credentials', async () => {
    expect(ids(await checkServed({}, '', { password: 'wrong' }))).toEqual(['auth.rejected']);
    expect(ids(await checkServed({}, '', { user: undefined, password: undefined }))).toEqual(['auth.required']);
  });

  it.skipIf(name !== 'nginx')('flags a server that answers HEAD without credentials while GET needs them', async () => {
    const result = await checkServed({ openHead: true }, '', {});
    expect(ids(result)).toEqual(['auth.head-unauthenticated']);
    expect(result.accepted).toBe(true); // a warning: the installer's own HEAD passes
    // Without credentials the HEAD passes and the GET is refused: still an authentication finding.
    const anonymous = await checkServed({ openHead: true }, '', { user: undefined, password: undefined });
    expect(ids(anonymous)).toEqual(['auth.head-unauthenticated', 'auth.required']);
  });

  it('with credentials, reports which paths answer without them (the HCL, the patch store, --open-path)', async () => {
    const dir = await depotCopy();
    await writeTree(dir, { [STORE_FILE]: '<index/>\n' });
    const open = (r: CheckResult) => r.findings.filter((f) => f.id.startsWith('open.')).map((f) => [f.id, f.severity, f.path]);
    const opened = await checkServed({ root: dir, open: [DEPOT_PATHS.hclDir, UMDS_PATCH_STORE_DIR] }, '', { openPaths: [STORE_FILE] });
    expect(open(opened)).toEqual([
      ['open.anonymous', 'info', DEPOT_PATHS.hclAll],
      ['open.anonymous', 'info', `${UMDS_PATCH_STORE_DIR}/`],
      ['open.anonymous', 'info', STORE_FILE],
    ]);
    expect(opened.findings.find((f) => f.path === DEPOT_PATHS.hclAll && f.id === 'open.anonymous')!.evidence).toEqual({ status: 200 });
    expect(opened.accepted).toBe(true);

    // Nothing open: the patch store asks for credentials, which the update tool cannot send. Only a server that
    // shows the folder to the depot user (nginx: 403, no listing) proves it is there, which makes it a warning.
    const closed = await checkServed({ root: dir }, '', { openPaths: [STORE_FILE] });
    expect(open(closed)).toEqual([
      ['open.patch-store.auth-required', name === 'nginx' ? 'warning' : 'info', `${UMDS_PATCH_STORE_DIR}/`],
      ['open.path.auth-required', 'warning', STORE_FILE],
    ]);
    expect(onTheCommandLine(closed.findings.find((f) => f.id === 'open.patch-store.auth-required')!.fix)).toContain(`--open ${UMDS_PATCH_STORE_DIR}`);
    expect(closed.accepted).toBe(true);

    // Segments, not strings: a prefix that is only the start of a name opens nothing of it.
    const partial = await checkServed({ root: dir, open: ['umds'] }, '', {});
    expect(open(partial).map(([id]) => id)).toEqual(['open.patch-store.auth-required']);

    // Without credentials every request is anonymous already: nothing more to say.
    const anonymous = await checkServed({ root: dir, open: [UMDS_PATCH_STORE_DIR] }, '', { user: undefined, password: undefined });
    expect(open(anonymous)).toEqual([]);
  });

  it("warns when the certificate given as CA is a leaf: the depot's own is still accepted (as Java's PKIX does), another is not", async () => {
    const [leaf] = splitPemBlocks(good.certPem, 'CERTIFICATE');
    const own = await checkServed({}, '', { caPems: [leaf!] });
    expect(ids(own)).toEqual(['tls.ca.leaf']);
    expect(own.accepted).toBe(true);
    const warning = own.findings.find((f) => f.id === 'tls.ca.leaf')!;
    expect(warning.severity).toBe('warning');
    expect(warning.evidence).toMatchObject({ servedCertificate: true, subject: `CN=${HOST}` });
    expect(warning.installer).toContain('VMWARE_DEPOT_CONNECT_FAILURE');
    expect(onTheCommandLine(warning.fix)).toContain(readCertificate(ca.certPem).subject);
    expect(onTheCommandLine(warning.fix)).toContain('depotkit installer trust --ca');
    expect(onTheCommandLine(warning.fix)).toContain('depotkit cert inspect');

    // A leaf that is not the served one vouches for nothing: rejected, and the warning says why.
    const other = await issueServerCert(ca, { dns: ['other.test'], keySize: 2048 });
    const wrong = await checkServed({}, '', { caPems: [other.certPem] });
    // Untrusted: the password is withheld, so what it protects goes unchecked.
    expect(ids(wrong).sort()).toEqual(['auth.unchecked', 'auth.withheld', 'cert.chain.untrusted', 'tls.ca.leaf']);
    expect(wrong.accepted).toBe(false);
    expect(wrong.findings.find((f) => f.id === 'tls.ca.leaf')!.evidence).toMatchObject({ servedCertificate: false });

    // A self-signed depot certificate given as its own CA: no CA exists yet, so the fix makes one.
    const self = brokenServerCert(ca, 'self-signed', HOST);
    const selfSigned = await checkServed({ cert: self }, '', { caPems: [self.certPem] });
    // It names the depot but not the address it is reached at.
    expect(ids(selfSigned)).toEqual(['tls.ca.leaf', 'tls.san.address-missing']);
    expect(selfSigned.accepted).toBe(true);
    expect(onTheCommandLine(selfSigned.findings.find((f) => f.id === 'tls.ca.leaf')!.fix)).toContain(
      `depotkit cert ca --out <ca-dir>; depotkit cert issue --ca <ca-dir> --dns ${HOST} --out <out-dir>`,
    );
  });

  it('reports a URL that ends in /PROD, and checks the right base anyway', async () => {
    const result = await checkServed({}, '/PROD', {});
    expect(ids(result)).toEqual(['url.ends-with-prod']);
    expect(result.stats.checked).toBe(result.stats.binaries);
  });

  it('reports a missing catalog, a catalog that is not JSON and a missing signature', async () => {
    const noCatalog = await depotCopy();
    await rm(join(noCatalog, DEPOT_PATHS.catalog));
    expect(ids(await checkServed({ root: noCatalog }, '', {}))).toEqual(['catalog.missing']);

    const notJson = await depotCopy();
    await writeFile(join(notJson, DEPOT_PATHS.catalog), '<html>not json</html>');
    expect(ids(await checkServed({ root: notJson }, '', {}))).toContain('catalog.json.invalid');

    const noSig = await depotCopy();
    await rm(join(noSig, DEPOT_PATHS.catalogSig));
    expect(ids(await checkServed({ root: noSig }, '', {}))).toEqual(['catalog.sig.missing']);
  });

  it('reports a missing binary, one of the wrong size, and (deep) one with the wrong content', async () => {
    const dir = await depotCopy();
    const [missing, short, corrupt] = await readCatalogBinaries(dir);
    await rm(join(dir, missing!.path));
    await truncate(join(dir, short!.path), 10);
    const data = await readFile(join(dir, corrupt!.path));
    data[7] = data[7]! ^ 0x55;
    await writeFile(join(dir, corrupt!.path), data);
    const shallow = await checkServed({ root: dir }, '', {});
    expect(ids(shallow).sort()).toEqual(['binary.missing', 'binary.size-mismatch'].sort());
    const deep = await checkServed({ root: dir }, '', { deep: true });
    expect(deep.findings.filter((f) => f.id === 'binary.checksum-mismatch').map((f) => f.path)).toEqual([corrupt!.path]);
  });

  it('warns about a stale HCL', async () => {
    const dir = await depotCopy();
    const old = { timestamp: Math.floor(Date.now() / 1000) - 200 * 86400, jsonUpdatedTime: 'old' };
    await writeFile(join(dir, DEPOT_PATHS.hclAll), JSON.stringify({ ...old, data: {} }));
    await writeFile(join(dir, DEPOT_PATHS.hclLastUpdated), JSON.stringify(old));
    expect(ids(await checkServed({ root: dir }, '', {}))).toEqual(['hcl.stale']);
  });

  it('notes a plain HTTP depot; withholds the credentials there unless allowed, and then notes them in clear text', async () => {
    const server = await serve({ root: pristine });
    try {
      // An open depot: everything is checked without the password.
      const withheld = await checkDepot(server.url, { user: USER, password: PASSWORD });
      expect(ids(withheld)).toEqual(['http.plain', 'auth.withheld']);
      expect(withheld.accepted).toBe(true);
      expect(withheld.stats.checked).toBe(withheld.stats.binaries);
      const result = await checkDepot(server.url, { user: USER, password: PASSWORD, allowHttpCredentials: true });
      expect(ids(result)).toEqual(['http.plain', 'auth.cleartext']);
      expect(result.accepted).toBe(true);
    } finally {
      await server.stop();
    }
  });

  it('reports a refused connection and an unknown host', async () => {
    const server = await serve({ root: pristine });
    const url = server.url;
    await server.stop();
    expect(ids(await checkDepot(url))).toEqual(['net.refused']);
    expect(ids(await checkDepot('https://no-such-host.invalid'))).toEqual(['net.unknown-host']);
  });
});

// The command line once, against depotkit serve: what checkDepot finds is tested above behind each server.
describe('depotkit check', () => {
  const serveDepot = SERVERS.find((s) => s.name === 'depotkit serve')!.serve;

  it('exits 0 when accepted, printing the warnings, and 1 with findings as JSON; never prints the password', async () => {
    const server = await serveDepot({ root: pristine, ...good, auth: { user: USER, password: PASSWORD } });
    // The depot's own certificate as the CA: accepted with a warning.
    const leafFile = join(base, `leaf-${n++}.pem`);
    await writeFile(leafFile, splitPemBlocks(good.certPem, 'CERTIFICATE')[0]!);
    try {
      const ok = await runCli(['check', server.url, '--as-host', HOST, '--ca', leafFile, '--user', USER, '--password-file', passwordFile]);
      expect(ok.code).toBe(0);
      expect(ok.stdout).toMatch(/WARN {2}tls\.ca\.leaf: .*not a CA/);
      expect(ok.stdout).toContain('ACCEPT');
      const noCa = await runCli(['check', server.url, '--as-host', HOST, '--user', USER, '--password-file', passwordFile, '--json']);
      expect(noCa.code).toBe(1);
      expect(JSON.parse(noCa.stdout).findings.map((f: { id: string }) => f.id)).toContain('tls.ca.not-given');
      for (const r of [ok, noCa]) expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    } finally {
      await server.stop();
    }
  });

  it('asks for each --open-path without credentials', async () => {
    const dir = await depotCopy();
    await writeTree(dir, { [STORE_FILE]: '<index/>\n' });
    const server = await serveDepot({ root: dir, ...good, auth: { user: USER, password: PASSWORD }, open: [UMDS_PATCH_STORE_DIR] });
    try {
      const args = ['--as-host', HOST, '--ca', caFile, '--user', USER, '--password-file', passwordFile, '--open-path', STORE_FILE, '--open-path', 'PROD/COMP/'];
      const r = await runCli(['check', server.url, ...args, '--json']);
      expect(r.code).toBe(0);
      const findings = (JSON.parse(r.stdout) as CheckResult).findings.map((f) => [f.id, f.severity, f.path ?? null]);
      expect(findings).toContainEqual(['open.anonymous', 'info', STORE_FILE]);
      expect(findings).toContainEqual(['open.anonymous', 'info', `${UMDS_PATCH_STORE_DIR}/`]);
      expect(findings).toContainEqual(['open.path.auth-required', 'warning', 'PROD/COMP/']);
    } finally {
      await server.stop();
    }
  });

  // The CLI's main in this process: the built CLI's exit 2 of check is in newcomer-messages.test.ts.
  it.each([
    [['ftp://x'], /must start with https:\/\/ or http:\/\//],
    [['https://127.0.0.1:1', '--open-path', STORE_FILE], /--open-path needs --user/],
  ])('exits 2 for %j', async (args, message) => {
    const bad = await runMain(['check', ...args]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(message);
  });

  // check reads each --open-path with normaliseOpenPrefix, named as the flag: its refusals, as the command prints them.
  it.each([
    ['/umds-patch-store', /--open-path "\/umds-patch-store" must be relative/],
    ['a/../b', /"\.\."/],
  ])('exits 2 for --open-path %j', async (path, message) => {
    const bad = await refusal(() => normaliseOpenPrefix(path, '--open-path'));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(message);
  });
});

describe('depot check against misbehaving servers', () => {
  it('turns a connection cut mid-check into a finding and checks the rest', async () => {
    // Serves the demo depot's files, but resets the connection on the manifest.
    const server = createHttpServer(async (req, res) => {
      const path = decodeURIComponent(new URL(req.url!, 'http://x').pathname).slice(1);
      if (path === DEPOT_PATHS.manifest) return req.socket.destroy();
      try {
        const data = await readFile(join(pristine, path));
        res.writeHead(200, { 'content-length': data.length });
        res.end(req.method === 'HEAD' ? undefined : data);
      } catch {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const result = await checkDepot(`http://127.0.0.1:${port}`, {});
      expect(ids(result)).toEqual(['http.plain', 'manifest.failed']);
      expect(result.stats.checked).toBe(result.stats.binaries);
    } finally {
      server.close();
    }
  });

  it('names a TLS version older than 1.2 instead of failing the handshake', async () => {
    const server = createTlsServer(
      { cert: good.certPem, key: good.keyPem, minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT:@SECLEVEL=0' },
      (socket) => socket.end(),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const result = await checkDepot(`https://127.0.0.1:${port}`, { asHost: HOST, caPems: [ca.certPem] });
      expect(ids(result)).toContain('tls.version');
      expect(result.findings.find((f) => f.id === 'tls.version')!.message).toContain('TLSv1.1');
    } finally {
      server.close();
    }
  });
});
