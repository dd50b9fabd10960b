import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeEsxDemo } from '../../src/esx/demo.js';
import { importBundles } from '../../src/esx/import.js';
import { readEsxMetadata } from '../../src/esx/metadata-zip.js';
import { verifyEsx } from '../../src/esx/verify.js';
import { listFiles } from '../../src/util/walk.js';
import { runCli } from '../helpers/cli.js';
import { useTempDir } from '../helpers/temp.js';
import { bundleOf, zipOf } from './helpers.js';

const tmp = useTempDir('depotkit-esx-import-');
let bundleA: string;
let bundleB: string;
let firstVib: string;
let counter = 0;

beforeAll(async () => {
  const demo = await makeEsxDemo(join(tmp.dir, 'demo'), { vibs: 5, vibSize: 2048 });
  bundleA = join(tmp.dir, 'VMware-ESXi-9.0.0-demo-depot.zip');
  bundleB = join(tmp.dir, 'Vendor-addon-9.0.0-demo-depot.zip');
  await bundleOf(join(tmp.dir, 'demo'), bundleA);
  await bundleOf(join(tmp.dir, 'demo'), bundleB);
  firstVib = (await readEsxMetadata(await readFile(join(tmp.dir, 'demo', demo.metadata)), demo.metadata)).vibs[0]!.path;
});

const out = (): string => join(tmp.dir, `out-${counter++}`);

describe('offline bundles imported into one depot', () => {
  it('lists every bundle under one root index that verifies whole, and a re-run writes nothing again', async () => {
    const dir = out();
    const result = await importBundles([bundleA, bundleB], dir);
    expect(result.findings).toEqual([]);
    expect(result.bundles.map((b) => [b.folder, b.vibs, b.kept])).toEqual([
      ['bundles/VMware-ESXi-9.0.0-demo-depot', 5, 0],
      ['bundles/Vendor-addon-9.0.0-demo-depot', 5, 0],
    ]);
    const verified = await verifyEsx(dir, { deep: true });
    expect(verified.findings).toEqual([]);
    // One depot at the top: the bundles' own indexes are part of it, not depots of their own.
    expect(verified.depots.map((d) => d.folder)).toEqual(['']);
    expect(verified.depots[0]!.products.map((p) => [p.productId, p.metadata.split('/')[1], p.state])).toEqual([
      ['embeddedEsx', 'VMware-ESXi-9.0.0-demo-depot', 'complete'],
      ['esxio', 'VMware-ESXi-9.0.0-demo-depot', 'complete'],
      ['embeddedEsx', 'Vendor-addon-9.0.0-demo-depot', 'complete'],
      ['esxio', 'Vendor-addon-9.0.0-demo-depot', 'complete'],
    ]);

    const again = await importBundles([bundleA], dir);
    expect(again.bundles[0]).toMatchObject({ vibs: 5, kept: 5, bytes: 0 });
    // The second bundle imported before stays listed.
    expect((await verifyEsx(dir)).depots[0]!.products).toHaveLength(4);
  });

  it('never places a VIB whose bytes the metadata does not vouch for, nor lists its bundle', async () => {
    const bytes = Buffer.from(await readFile(join(tmp.dir, 'demo', firstVib)));
    bytes[10] ^= 1;
    const bad = join(tmp.dir, 'Bad-9.0.0-depot.zip');
    await bundleOf(join(tmp.dir, 'demo'), bad, { [firstVib]: bytes });
    const dir = out();
    const result = await importBundles([bad, bundleA], dir);
    expect(result.ok).toBe(false);
    expect(result.findings.map((f) => f.id)).toEqual(['esx.vib.checksum']);
    expect(result.findings[0]!.message).toContain('not placed');
    const files = await listFiles(dir, { dot: true });
    expect(files).not.toContain(`bundles/Bad-9.0.0-depot/${firstVib}`);
    expect(files.some((f) => f.includes('.depotkit-tmp-'))).toBe(false);
    // Only the good bundle is listed, and the depot verifies.
    const verified = await verifyEsx(dir);
    expect(verified.ok).toBe(true);
    expect(new Set(verified.depots[0]!.products.map((p) => p.metadata.split('/')[1]))).toEqual(new Set(['VMware-ESXi-9.0.0-demo-depot']));
  });

  it('refuses a zip that is no bundle and a folder holding another depot, writing nothing', async () => {
    const notBundle = join(tmp.dir, 'not-a-bundle.zip');
    await writeFile(notBundle, await zipOf({ 'readme.txt': 'x' }));
    const dir = out();
    await expect(importBundles([notBundle], dir)).rejects.toThrow(/not an ESX offline bundle/);
    await expect(readdir(dir)).rejects.toThrow();

    const foreign = out();
    await makeEsxDemo(foreign, { vibs: 1, vibSize: 10 });
    await expect(importBundles([bundleA], foreign)).rejects.toThrow(/no import made/);
  });
});

describe('depotkit esx import', () => {
  it('imports, prints where vLCM points, and exits 1 on a bundle it refused', async () => {
    const dir = out();
    const ok = await runCli(['esx', 'import', bundleA, '--out', dir]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('OK: 1 bundle imported into');
    const json = await runCli(['esx', 'import', bundleA, '--out', dir, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, bundles: [{ kept: 5 }] });
    const missing = await runCli(['esx', 'import', join(tmp.dir, 'nope.zip'), '--out', dir]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('does not exist');
  });
});
