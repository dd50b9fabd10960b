import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cp, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEsxDemo, vendorIndexXml } from '../../src/esx/index.js';
import { verifyEsx } from '../../src/esx/verify.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { startDepotServer, type DepotServer } from '../../src/server/index.js';
import { mirrorEsx } from '../../src/transfer/esx-mirror/index.js';
import { partialPathFor } from '../../src/transfer/mirror.js';
import { listFiles } from '../../src/util/walk.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { NGINX, startNginx } from '../helpers/nginx.js';
import { sendFile, startUpstream } from '../transfer/upstream.js';

const VIB_SIZE = 96 * 1024;
let base: string;
let cleanup: () => Promise<void>;
/** A served tree: the demo ESX depot under umds-patch-store/, as the vendor's web server recipe serves it. */
let site: string;
let caPems: string[];
let caFile: string;
let tls: { certPem: string; keyPem: string };

beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir('depotkit-esx-mirror-'));
  site = join(base, 'site');
  await makeEsxDemo(join(site, 'umds-patch-store'), { vibs: 9, vibSize: VIB_SIZE });
  const ca = await createCa({ keySize: 2048 });
  const issued = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  tls = { certPem: issued.chainPem, keyPem: issued.keyPem };
  caPems = [ca.certPem];
  caFile = join(base, 'ca.pem');
  await writeFile(caFile, ca.certPem);
});
afterAll(() => cleanup());

let n = 0;
const outDir = () => join(base, `out-${n++}`);

const servers = [
  {
    name: 'depotkit serve',
    skip: false,
    serve: async (root: string) => {
      const server = await startDepotServer({ root, host: '127.0.0.1', port: 0, tls });
      return { url: server.url.replace('127.0.0.1', 'localhost'), stop: () => server.close() };
    },
  },
  {
    name: 'nginx',
    skip: !NGINX,
    serve: async (root: string) => {
      const server = await startNginx({ root, ...tls });
      return { url: server.url.replace('127.0.0.1', 'localhost'), stop: () => server.stop() };
    },
  },
];

describe.each(servers)('esx mirror from $name', ({ skip, serve }) => {
  it.skipIf(skip)('mirrors every VIB checked, the indexes last, and a second run downloads nothing', async () => {
    const server = await serve(site);
    try {
      const out = outDir();
      const report = await mirrorEsx({ url: `${server.url}/umds-patch-store/index.xml`, out, caPems });
      expect(report.ok).toBe(true);
      expect(report.downloaded).toHaveLength(9);
      expect(report.failed).toEqual([]);
      // Metadata zips first, then the vendor index, the root index last.
      expect(report.metadata.written).toEqual(['depotkit-demo-ESXi-9.0.0-metadata.zip', 'vendor-index.xml', 'index.xml']);
      expect(report.products.map((p) => p.state)).toEqual(['complete', 'complete']);
      const verified = await verifyEsx(out, { deep: true });
      expect(verified.ok).toBe(true);
      expect(verified.depots[0]!.stats).toMatchObject({ vibs: 9, present: 9, hashed: 9 });

      const again = await mirrorEsx({ url: `${server.url}/umds-patch-store/index.xml`, out, caPems });
      expect(again.ok).toBe(true);
      expect(again.downloaded).toEqual([]);
      expect(again.alreadyInPlace).toHaveLength(9);
      expect(again.metadata.unchanged).toHaveLength(3);
    } finally {
      await server.stop();
    }
  });
});

describe('esx mirror against a server that misbehaves', () => {
  it('never places a VIB served with other bytes, and holds the indexes back', async () => {
    const root = join(site, 'umds-patch-store');
    const files = await listFiles(root);
    const victim = files.find((f) => f.endsWith('.vib'))!;
    const upstream = await startUpstream(
      tls,
      (path, _req, res) => {
        if (path !== victim) return false;
        // Same size, other bytes: only the SHA-256 tells.
        const other = Buffer.from(readFileSync(join(root, victim)).map((x) => x ^ 0xff));
        res.writeHead(200, { 'content-length': String(other.length) });
        res.end(other);
      },
      root,
    );
    try {
      const out = outDir();
      const report = await mirrorEsx({ url: `${upstream.url}/index.xml`, out, caPems, retries: 0 });
      expect(report.ok).toBe(false);
      expect(report.failed.map((f) => f.path)).toEqual([victim]);
      expect(report.failed[0]!.reason).toMatch(/SHA-256|size/);
      expect(report.downloaded).toHaveLength(8);
      expect(report.metadata.held).toBe(true);
      const here = await listFiles(out);
      expect(here).not.toContain(victim);
      expect(here).not.toContain('index.xml');
      expect(here.filter((f) => f.endsWith('.vib'))).toHaveLength(8);
      // Nor its partial file: bytes that are not the metadata's are dropped.
      expect((await listFiles(out, { dot: true })).some((f) => f.startsWith(`${dirname(victim)}/`))).toBe(false);
    } finally {
      await upstream.close();
    }
  });

  it('resumes a VIB cut short with a Range request on the next run', async () => {
    const root = join(site, 'umds-patch-store');
    const victim = (await listFiles(root)).find((f) => f.endsWith('.vib'))!;
    const whole = await readFile(join(root, victim));
    let cut = true;
    const ranges: string[] = [];
    const upstream = await startUpstream(
      tls,
      (path, req, res) => {
        if (path !== victim) return false;
        if (cut) {
          // Half the file, then the connection dies (a server gone, a run killed).
          res.writeHead(200, { 'content-length': String(whole.length) });
          res.write(whole.subarray(0, whole.length / 2), () => res.destroy());
          return;
        }
        const range = /^bytes=(\d+)-$/.exec(String(req.headers.range));
        if (!range) return void sendFile(join(root, path), res);
        ranges.push(req.headers.range!);
        const start = Number(range[1]);
        res.writeHead(206, { 'content-range': `bytes ${start}-${whole.length - 1}/${whole.length}`, 'content-length': String(whole.length - start) });
        res.end(whole.subarray(start));
      },
      root,
    );
    try {
      const out = outDir();
      const first = await mirrorEsx({ url: `${upstream.url}/index.xml`, out, caPems, retries: 0 });
      expect(first.ok).toBe(false);
      expect(first.failed.map((f) => f.path)).toEqual([victim]);
      const vib = { path: victim, checksum: createHash('sha256').update(whole).digest('hex'), fileName: victim.split('/').pop()! };
      expect((await stat(partialPathFor(out, vib))).size).toBe(whole.length / 2);

      cut = false;
      const second = await mirrorEsx({ url: `${upstream.url}/index.xml`, out, caPems });
      expect(second.ok).toBe(true);
      expect(second.downloaded).toEqual([{ path: victim, size: whole.length, resumedFrom: whole.length / 2 }]);
      expect(ranges).toEqual([`bytes=${whole.length / 2}-`]);
      expect(second.alreadyInPlace).toHaveLength(8);
      expect((await verifyEsx(out, { deep: true })).ok).toBe(true);
    } finally {
      await upstream.close();
    }
  });
});

describe('esx mirror of chosen products', () => {
  it('downloads only the VIBs of the product and version chosen, and fetches every metadata zip', async () => {
    // Two metadata zips: ESXi 9 at the top, ESXi-on-DPU 8 in a folder of its own (its VIBs below it).
    const root = join(base, 'two', 'umds-patch-store');
    await makeEsxDemo(root, { vibs: 6, vibSize: 4096 });
    const other = join(base, 'two-other');
    const demo = await makeEsxDemo(other, { vibs: 3, vibSize: 4096 });
    await mkdir(join(root, 'dpu'));
    await rename(join(other, demo.metadata), join(root, 'dpu', demo.metadata));
    await cp(join(other, 'vib20'), join(root, 'dpu', 'vib20'), { recursive: true });
    await writeFile(
      join(root, 'vendor-index.xml'),
      vendorIndexXml([
        { productId: 'embeddedEsx', version: '9.*', url: demo.metadata, channels: ['default'] },
        { productId: 'esxio', version: '8.*', url: `dpu/${demo.metadata}`, channels: ['default'] },
      ]),
    );
    const server = await startDepotServer({ root: join(base, 'two'), host: '127.0.0.1', port: 0, tls });
    try {
      const url = `${server.url.replace('127.0.0.1', 'localhost')}/umds-patch-store/index.xml`;
      await expect(mirrorEsx({ url, out: outDir(), caPems, select: { products: ['esxio'], versions: ['9.*'] } })).rejects.toThrow(
        /No product of the depot matches esxio 9\.\*; it offers: embeddedEsx 9\.\*, esxio 8\.\*/,
      );
      const out = outDir();
      const report = await mirrorEsx({ url, out, caPems, select: { products: ['esxio'], versions: ['8*'] } });
      expect(report.ok).toBe(true);
      expect(report.downloaded.map((d) => d.path).every((p) => p.startsWith('dpu/vib20/'))).toBe(true);
      expect(report.downloaded).toHaveLength(3);
      expect(report.selection).toMatchObject({ chosen: ['esxio 8.*'], leftOut: { vibs: 6 } });
      expect(report.products.map((p) => [p.productId, p.state])).toEqual([
        ['embeddedEsx', 'metadata-only'],
        ['esxio', 'complete'],
      ]);
      const here = await listFiles(out);
      expect(here).toEqual(expect.arrayContaining(['index.xml', 'vendor-index.xml', demo.metadata, `dpu/${demo.metadata}`]));
      expect(here.filter((f) => f.endsWith('.vib'))).toHaveLength(3);
    } finally {
      await server.close();
    }
  });
});

describe('esx mirror from a token URL', () => {
  const TOKEN = 'Tk9-secret-download-token-5f3a';
  let server: DepotServer;
  let url: string;
  let tokenFile: string;
  beforeAll(async () => {
    // The vendor's layout: /<token>/PROD/COMP/ESX_HOST/main/vmw-depot-index.xml.
    const tree = join(base, 'vendor');
    const main = join(tree, TOKEN, 'PROD', 'COMP', 'ESX_HOST', 'main');
    await makeEsxDemo(main, { vibs: 3, vibSize: 4096 });
    await rename(join(main, 'index.xml'), join(main, 'vmw-depot-index.xml'));
    tokenFile = join(base, 'token');
    await writeFile(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
    server = await startDepotServer({ root: tree, host: '127.0.0.1', port: 0, tls });
    url = `${server.url.replace('127.0.0.1', 'localhost')}/{token}/PROD/COMP/ESX_HOST/main/vmw-depot-index.xml`;
  });
  afterAll(() => server?.close());

  it('puts the token where the URL says {token}, writes it nowhere, and leaves it out of every error', async () => {
    const out = outDir();
    const report = await mirrorEsx({ url, token: TOKEN, out, caPems });
    expect(report).toMatchObject({ ok: true, url, index: 'vmw-depot-index.xml' });
    expect(report.downloaded).toHaveLength(3);
    expect(JSON.stringify(report)).not.toContain(TOKEN);
    for (const file of await listFiles(out, { dot: true })) {
      expect(await readFile(join(out, file), 'latin1')).not.toContain(TOKEN);
    }
    expect((await listFiles(out)).join('\n')).not.toContain(TOKEN);
    // A wrong token (404) and a product the depot does not offer: said with the URL as given.
    const wrong = await mirrorEsx({ url, token: `${TOKEN}x`, out: outDir(), caPems }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(wrong?.message).toContain('404');
    expect(wrong?.message).not.toContain(TOKEN);
    const chosen = mirrorEsx({ url, token: TOKEN, out: outDir(), caPems, select: { products: ['esxio'], versions: ['8.*'] } });
    await expect(chosen).rejects.toMatchObject({
      exitCode: 2,
      message: 'No product of the depot matches esxio 8.*; it offers: embeddedEsx 9.*, esxio 9.*.',
    });
  });

  it('the CLI takes the token from --token-file or --token-env and prints it nowhere, and says how to give it when missing', async () => {
    const out = outDir();
    const res = await runCli(['esx', 'mirror', url, '--out', out, '--ca', caFile, '--token-file', tokenFile, '--json']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ ok: true, url });
    expect(res.stdout).not.toContain(TOKEN);
    // The text report names the URL as given.
    const text = await runCli(['esx', 'mirror', url, '--out', out, '--ca', caFile, '--token-env', 'DK_TEST_TOKEN'], { env: { DK_TEST_TOKEN: TOKEN } });
    expect(text.code).toBe(0);
    expect(`${text.stdout}${text.stderr}`).not.toContain(TOKEN);
    expect(text.stdout).toContain('{token}');
    const none = await runCli(['esx', 'mirror', url, '--out', outDir(), '--ca', caFile]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--token-file');
  });
});

describe('esx mirror held to a seal', () => {
  it('reports the seal of the source, takes a source that matches the seal given, and refuses one that does not before writing anything', async () => {
    const server = await startDepotServer({ root: site, host: '127.0.0.1', port: 0, tls });
    const url = `${server.url.replace('127.0.0.1', 'localhost')}/umds-patch-store/index.xml`;
    try {
      const first = await mirrorEsx({ url, out: outDir(), caPems });
      expect(first.ok).toBe(true);
      expect(first.vouchedBy).toBe('source');
      expect(first.seal).toMatch(/^esx [0-9A-Z]{5}(-[0-9A-Z]{5}){4}$/);
      const sealed = await mirrorEsx({ url, out: outDir(), caPems, expectSeal: first.seal.toLowerCase() });
      expect(sealed.ok).toBe(true);
      expect(sealed.vouchedBy).toBe('seal');
      // Another depot's seal: the source whose metadata someone replaced is not the one vouched for.
      const other = 'esx 00000-00000-00000-00000-00000';
      const refusedOut = outDir();
      await expect(mirrorEsx({ url, out: refusedOut, caPems, expectSeal: other })).rejects.toThrow(/is not the one the seal given vouches for/);
      await expect(stat(refusedOut)).rejects.toThrow();
      const cli = await runCli(['esx', 'mirror', url, '--out', outDir(), '--ca', caFile, '--expect', first.seal]);
      expect(cli.code).toBe(0);
      expect(cli.stdout).toContain(`Seal: ${first.seal}, as the seal given (--expect) says`);
    } finally {
      await server.close();
    }
  });
});
