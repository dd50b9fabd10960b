import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UMDS_PATCH_STORE_DIR } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { makeEsxDemo } from '../../src/esx/demo.js';
import { createCa, issueServerCert, type CaMaterial } from '../../src/cert/index.js';
import { checkEsxDepot, type EsxCheckResult } from '../../src/check/esx.js';
import { startDepotServer } from '../../src/server/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { NGINX, startNginx } from '../helpers/nginx.js';
import { copyOf } from './helpers.js';

const HOST = 'depot.test';
const AUTH = { user: 'depot', password: 'correct horse battery' };
const INDEX = `/${UMDS_PATCH_STORE_DIR}/index.xml`;

let base: string;
let cleanup: () => Promise<void>;
let pristine: string;
let ca: CaMaterial;
let cert: { certPem: string; keyPem: string };
let n = 0;

beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir('depotkit-esx-check-'));
  // The site's tree: the PROD/ depot behind Basic auth, and the ESX depot beside it.
  pristine = join(base, 'pristine');
  await makeDemoDepot(pristine, { binarySize: 1024 });
  await makeEsxDemo(join(pristine, UMDS_PATCH_STORE_DIR), { vibs: 6, vibSize: 4096 });
  ca = await createCa({ keySize: 2048 });
  const issued = await issueServerCert(ca, { dns: [HOST], ips: ['127.0.0.1'], keySize: 2048 });
  cert = { certPem: issued.chainPem, keyPem: issued.keyPem };
});
afterAll(() => cleanup());

type Serve = (root: string, open: string[]) => Promise<{ url: string; stop(): Promise<void> }>;

const SERVERS: { name: string; serve: Serve; skip: boolean }[] = [
  {
    name: 'depotkit serve',
    skip: false,
    serve: async (root, open) => {
      const server = await startDepotServer({ root, host: '127.0.0.1', port: 0, tls: cert, auth: AUTH, openPrefixes: open });
      return { url: server.url, stop: () => server.close() };
    },
  },
  { name: 'nginx', skip: !NGINX, serve: (root, open) => startNginx({ root, ...cert, auth: AUTH, openPaths: open }) },
];

const ids = (r: EsxCheckResult) => r.findings.filter((f) => f.severity !== 'info').map((f) => f.id);

describe.each(SERVERS)('an ESX depot checked as vLCM reads it, served by $name', ({ name, serve, skip }) => {
  if (skip) return it.skip(`${name} is not installed`);

  async function checkServed(root: string, open: string[], options: Parameters<typeof checkEsxDepot>[1]): Promise<EsxCheckResult> {
    const server = await serve(root, open);
    try {
      return await checkEsxDepot(`${server.url}${INDEX}`, { asHost: HOST, caPems: [ca.certPem], ...options });
    } finally {
      await server.stop();
    }
  }

  it('takes a whole depot served open beside a PROD/ behind credentials, every VIB hashed', async () => {
    const result = await checkServed(pristine, [UMDS_PATCH_STORE_DIR], { deep: true });
    expect(ids(result)).toEqual([]);
    expect(result.accepted).toBe(true);
    expect(result.stats).toEqual({ metadata: 1, vibs: 6, present: 6, hashed: 6 });
    expect(result.products.map((p) => [p.productId, p.state])).toEqual([
      ['embeddedEsx', 'complete'],
      ['esxio', 'complete'],
    ]);
  });

  it('refuses without the CA that the vCenter would have to trust', async () => {
    const result = await checkServed(pristine, [UMDS_PATCH_STORE_DIR], { caPems: [] });
    expect(result.accepted).toBe(false);
    expect(ids(result)).toContain('tls.ca.not-given');
  });

  it('says that vLCM sends no credentials when the depot is behind them', async () => {
    const result = await checkServed(pristine, [], {});
    expect(result.accepted).toBe(false);
    const index = result.findings.find((f) => f.id === 'esx.index.unreadable');
    expect(index?.message).toContain('vLCM sends none');
  });

  it('names a VIB that is not served', async () => {
    const root = await copyOf(pristine, join(base, `depot-${n++}`));
    const vib = 'vib20/demo-esxi-0001/DKD_bootbank_demo-esxi-0001_9.0.0-0.0.24755229.vib';
    await rm(join(root, UMDS_PATCH_STORE_DIR, vib));
    const result = await checkServed(root, [UMDS_PATCH_STORE_DIR], {});
    expect(ids(result)).toEqual(['esx.vib.missing']);
    expect(result.findings[0]!.message).toContain(vib);
    expect(result.products[0]!.state).toBe('files-missing');
  });
});

describe('depotkit esx check', () => {
  it('accepts a served depot by its index URL (exit 0), and refuses a URL that names no index (exit 2)', async () => {
    const caFile = join(base, 'ca.pem');
    await writeFile(caFile, ca.certPem);
    const server = await startDepotServer({ root: pristine, host: '127.0.0.1', port: 0, tls: cert, auth: AUTH, openPrefixes: [UMDS_PATCH_STORE_DIR] });
    try {
      const ok = await runCli(['esx', 'check', `${server.url}${INDEX}`, '--ca', caFile, '--as-host', HOST]);
      expect(ok.stdout).toContain('ACCEPT: vSphere Lifecycle Manager would take this depot: 6/6 VIBs served');
      expect(ok.code).toBe(0);
      const notIndex = await runCli(['esx', 'check', `${server.url}/${UMDS_PATCH_STORE_DIR}/`, '--ca', caFile]);
      expect(notIndex.code).toBe(2);
      expect(notIndex.stderr).toContain('does not name a root index');
    } finally {
      await server.close();
    }
  });
});

describe('a server that answers HEAD without Content-Length', () => {
  /** Serves the ESX depot over plain HTTP, every answer chunked: a HEAD says a VIB is there, never its size. */
  async function chunkedServer(root: string): Promise<{ url: string; close: () => Promise<void> }> {
    const server = createServer((req, res) => {
      const path = join(root, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
      readFile(path).then(
        (data) => {
          res.writeHead(200, { 'transfer-encoding': 'chunked' });
          if (req.method === 'HEAD') return res.end();
          res.write(data.subarray(0, 10));
          res.end(data.subarray(10));
        },
        () => res.writeHead(404).end(),
      );
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, close: () => new Promise((done) => server.close(() => done())) };
  }

  it('says the VIBs were not measured, not that they have another size; deep hashes them', async () => {
    const server = await chunkedServer(pristine);
    try {
      const shallow = await checkEsxDepot(`${server.url}${INDEX}`, {});
      expect(ids(shallow)).toEqual(['esx.http.plain', 'esx.vib.unmeasured']);
      expect(shallow.accepted).toBe(true);
      expect(shallow.findings.find((f) => f.id === 'esx.vib.unmeasured')!.message).toMatch(/^6 VIBs were answered without a Content-Length/);
      expect(shallow.products.map((p) => p.state)).toEqual(['complete', 'complete']);
      const deep = await checkEsxDepot(`${server.url}${INDEX}`, { deep: true });
      expect(ids(deep)).toEqual(['esx.http.plain']);
      expect(deep.stats).toEqual({ metadata: 1, vibs: 6, present: 6, hashed: 6 });
    } finally {
      await server.close();
    }
  });
});
