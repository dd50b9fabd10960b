import { mkdir, readFile, readdir, rename, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeEsxDemo, type EsxDemoResult } from '../../src/esx/demo.js';
import { readEsxMetadata } from '../../src/esx/metadata-zip.js';
import { verifyEsx } from '../../src/esx/verify.js';
import { runCli } from '../helpers/cli.js';
import { tempDir, useTempDir } from '../helpers/temp.js';
import { bundleOf, copyOf, zipOf } from './helpers.js';

const tmp = useTempDir('depotkit-esx-');
let pristine: string;
let demo: EsxDemoResult;
let counter = 0;

beforeAll(async () => {
  pristine = join(tmp.dir, 'pristine');
  demo = await makeEsxDemo(pristine, { vibs: 6, vibSize: 4096 });
});

const fresh = (): Promise<string> => copyOf(pristine, join(tmp.dir, `case-${counter++}`));
const ids = (result: { findings: { id: string }[] }): string[] => result.findings.map((f) => f.id);

/** The depot-relative paths of the demo's VIBs, as its metadata lists them. */
async function demoVibs(dir: string): Promise<string[]> {
  const metadata = await readEsxMetadata(await readFile(join(dir, demo.metadata)), demo.metadata);
  return metadata.vibs.map((v) => v.path).sort();
}

describe('an ESX depot verified as vLCM reads it', () => {
  it('passes the demo, deep too, with every product complete', async () => {
    const result = await verifyEsx(pristine, { deep: true });
    expect(result.findings).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.depots).toHaveLength(1);
    const [depot] = result.depots;
    expect(depot!.kind).toBe('online');
    expect(depot!.stats).toMatchObject({ metadata: 1, vibs: 6, present: 6, hashed: 6 });
    expect(depot!.products.map((p) => [p.productId, p.version, p.state])).toEqual([
      ['embeddedEsx', '9.*', 'complete'],
      ['esxio', '9.*', 'complete'],
    ]);
    expect(depot!.products[0]!.components.map((c) => c.name)).toEqual(['DEMO-ESXi', 'DEMO-nic-driver', 'DEMO-host-tools']);
  });

  it('names a missing VIB and a VIB cut short, and the products they leave incomplete', async () => {
    const dir = await fresh();
    const [first, second] = await demoVibs(dir);
    await rm(join(dir, first!));
    await truncate(join(dir, second!), 100);
    const result = await verifyEsx(dir);
    expect(result.ok).toBe(false);
    expect(ids(result)).toEqual(['esx.vib.missing', 'esx.vib.size']);
    expect(result.findings[0]!.message).toContain(first);
    expect(result.findings[1]!.evidence).toMatchObject({ count: 1, files: [{ path: second, found: 100 }] });
    expect(result.depots[0]!.products[0]).toMatchObject({ state: 'files-missing', vibs: 6, present: 4 });
  });

  it('finds with --deep a VIB of the right size with other bytes, and only with it', async () => {
    const dir = await fresh();
    const [first] = await demoVibs(dir);
    const bytes = await readFile(join(dir, first!));
    bytes[bytes.length - 1] ^= 0xff;
    await writeFile(join(dir, first!), bytes);
    expect((await verifyEsx(dir)).ok).toBe(true);
    const deep = await verifyEsx(dir, { deep: true });
    expect(ids(deep)).toEqual(['esx.vib.checksum']);
    expect(deep.depots[0]!.products[0]!.state).toBe('files-missing');
  });

  it('says metadata only when no VIB is there', async () => {
    const dir = await fresh();
    await rm(join(dir, 'vib20'), { recursive: true });
    const result = await verifyEsx(dir);
    expect(result.depots[0]!.products.map((p) => p.state)).toEqual(['metadata-only', 'metadata-only']);
    expect(result.findings[0]).toMatchObject({ id: 'esx.vib.missing', evidence: { count: 6 } });
  });

  it('warns of a VIB no metadata lists', async () => {
    const dir = await fresh();
    await mkdir(join(dir, 'vib20', 'stray'), { recursive: true });
    await writeFile(join(dir, 'vib20', 'stray', 'stray.vib'), 'x');
    const result = await verifyEsx(dir);
    expect(result.ok).toBe(true);
    expect(result.findings).toMatchObject([{ id: 'esx.vib.unlisted', severity: 'warning', evidence: { files: ['vib20/stray/stray.vib'] } }]);
  });
});

describe('a broken chain', () => {
  it('a vendor index that is missing', async () => {
    const dir = await fresh();
    await rm(join(dir, 'vendor-index.xml'));
    const result = await verifyEsx(dir);
    expect(ids(result)).toEqual(['esx.vendor-index.missing']);
    expect(result.depots[0]!.products).toEqual([]);
  });

  it('a root index that is not XML, and one with a DOCTYPE (how an entity bomb starts)', async () => {
    const dir = await fresh();
    await writeFile(join(dir, 'index.xml'), '<vendorList><vendor>');
    expect(ids(await verifyEsx(dir))).toEqual(['esx.index.unreadable']);
    await writeFile(join(dir, 'index.xml'), '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><vendorList/>');
    const result = await verifyEsx(dir);
    expect(result.findings[0]).toMatchObject({ id: 'esx.index.unreadable' });
    expect(result.findings[0]!.message).toContain('DOCTYPE');
  });

  it('a metadata zip that is missing, or not a zip', async () => {
    const dir = await fresh();
    await rename(join(dir, demo.metadata), join(dir, 'elsewhere.zip'));
    expect(ids(await verifyEsx(dir))).toContain('esx.metadata.missing');
    await writeFile(join(dir, demo.metadata), 'not a zip');
    const result = await verifyEsx(dir);
    expect(ids(result)).toContain('esx.metadata.unreadable');
    expect(result.depots[0]!.products[0]!.state).toBe('metadata-missing');
  });

  it('a metadata zip that is a zip bomb is refused before it is decompressed', async () => {
    const dir = await fresh();
    const bomb = await zipOf({ 'vmware.xml': Buffer.alloc(64 * 1024 ** 2, 0x20) });
    await writeFile(join(dir, demo.metadata), bomb);
    const result = await verifyEsx(dir);
    const unreadable = result.findings.find((f) => f.id === 'esx.metadata.unreadable');
    expect(unreadable?.message).toContain('zip bomb');
  });

  it('a reference that leaves the depot is not followed', async () => {
    const dir = await fresh();
    const vendor = (await readFile(join(dir, 'vendor-index.xml'), 'utf8')).replaceAll(demo.metadata, '../../etc/passwd');
    await writeFile(join(dir, 'vendor-index.xml'), vendor);
    const result = await verifyEsx(dir);
    expect(ids(result)).toEqual(['esx.vendor-index.outside', 'esx.vendor-index.outside']);
    expect(result.findings[0]!.message).toContain('leaves the depot');
  });

  it('a root index with no ESX content', async () => {
    const dir = await fresh();
    const root = (await readFile(join(dir, 'index.xml'), 'utf8')).replace('depotmanagement/esx', 'depotmanagement/other');
    await writeFile(join(dir, 'index.xml'), root);
    expect(ids(await verifyEsx(dir))).toEqual(['esx.index.no-esx']);
  });

  it('a folder with no ESX depot', async () => {
    const { dir, cleanup: done } = await tempDir();
    await writeFile(join(dir, 'readme.txt'), 'x');
    const result = await verifyEsx(dir);
    await done();
    expect(ids(result)).toEqual(['esx.depot.none']);
    expect(result.ok).toBe(false);
  });
});

describe('where an ESX depot sits', () => {
  it('found in a served tree under umds-patch-store/ and PROD/COMP/ESX_HOST/<channel>/, each once', async () => {
    const tree = join(tmp.dir, `tree-${counter++}`);
    await copyOf(pristine, join(tree, 'umds-patch-store'));
    await copyOf(pristine, join(tree, 'PROD', 'COMP', 'ESX_HOST', 'main'));
    await rename(join(tree, 'PROD/COMP/ESX_HOST/main/index.xml'), join(tree, 'PROD/COMP/ESX_HOST/main/vmw-depot-index.xml'));
    // A bundle kept whole inside a depot is part of it, not a depot of its own.
    await copyOf(pristine, join(tree, 'umds-patch-store', 'bundles', 'one'));
    const result = await verifyEsx(tree);
    expect(result.depots.map((d) => [d.folder, d.index])).toEqual([
      ['umds-patch-store', 'umds-patch-store/index.xml'],
      ['PROD/COMP/ESX_HOST/main', 'PROD/COMP/ESX_HOST/main/vmw-depot-index.xml'],
    ]);
    expect(result.depots.every((d) => d.products.every((p) => p.state === 'complete'))).toBe(true);
  });

  it('an offline bundle zip, deep, and one whose VIB was replaced', async () => {
    const zip = join(tmp.dir, `bundle-${counter++}-depot.zip`);
    await bundleOf(pristine, zip);
    const result = await verifyEsx(zip, { deep: true });
    expect(result.findings).toEqual([]);
    expect(result.depots[0]).toMatchObject({ kind: 'bundle', folder: '', stats: { vibs: 6, present: 6, hashed: 6 } });

    const [first] = await demoVibs(pristine);
    const changed = Buffer.from(await readFile(join(pristine, first!)));
    changed[0] ^= 1;
    const bad = join(tmp.dir, `bundle-${counter++}-depot.zip`);
    await bundleOf(pristine, bad, { [first!]: changed });
    expect(ids(await verifyEsx(bad, { deep: true }))).toEqual(['esx.vib.checksum']);
  });

  it('a UMDS store: its metadata zips and VIBs verified, what its own index says not judged', async () => {
    const store = join(tmp.dir, `umds-${counter++}`);
    await copyOf(pristine, join(store, 'hostupdate', 'vmw'));
    for (const name of ['index.xml', 'vendor-index.xml']) await rm(join(store, 'hostupdate', 'vmw', name));
    await writeFile(join(store, 'hostupdate', '__hostupdate20-consolidated-index__.xml'), '<unpublished/>');
    const [first] = await demoVibs(pristine);
    await rm(join(store, 'hostupdate', 'vmw', first!));
    const result = await verifyEsx(store);
    expect(result.depots[0]).toMatchObject({ kind: 'umds', folder: '', stats: { metadata: 1, vibs: 6, present: 5 } });
    expect(ids(result)).toEqual(['esx.umds.index-not-read', 'esx.vib.missing']);
  });
});

describe('depot demo with an ESX depot', () => {
  it('puts a whole ESX depot under umds-patch-store/ beside PROD/, and the PROD/ depot still verifies', async () => {
    const { makeDemoDepot } = await import('../../src/depot/demo.js');
    const { verifyDepot } = await import('../../src/depot/verify.js');
    const dir = join(tmp.dir, `demo-${counter++}`);
    const made = await makeDemoDepot(dir, { binarySize: 512, esx: true });
    expect(made.esx).toMatchObject({ dir: join(dir, 'umds-patch-store'), index: 'index.xml', vibs: 6 });
    const esx = await verifyEsx(dir, { deep: true });
    expect(esx.findings).toEqual([]);
    expect(esx.depots.map((d) => d.folder)).toEqual(['umds-patch-store']);
    expect((await verifyDepot(dir)).ok).toBe(true);
  });
});

describe('depotkit esx verify', () => {
  it('exits 0 on a whole depot, 1 with findings, 2 on a path that is not there; --json is the report', async () => {
    const ok = await runCli(['esx', 'verify', pristine, '--deep']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('embeddedEsx 9.*: complete (6 VIBs)');
    expect(ok.stdout).toMatch(/OK: .*1 ESX depot, 6\/6 VIBs present with the right size .*6 hashed; 0 errors/);

    const dir = await fresh();
    await rm(join(dir, 'vib20'), { recursive: true });
    const bad = await runCli(['esx', 'verify', dir, '--json']);
    expect(bad.code).toBe(1);
    const report = JSON.parse(bad.stdout) as { ok: boolean; depots: { products: { state: string }[] }[] };
    expect(report.ok).toBe(false);
    expect(report.depots[0]!.products[0]!.state).toBe('metadata-only');

    const missing = await runCli(['esx', 'verify', join(tmp.dir, 'no-such')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('does not exist');
    expect(missing.stderr).not.toMatch(/\n\s+at /);
    expect(await readdir(tmp.dir)).not.toContain('no-such');
  });
});
