import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEPOT_PATHS, TEMP_PREFIX } from '../../src/constants.js';
import { catalogBinaries } from '../../src/depot/catalog.js';
import { verifyDepot } from '../../src/depot/verify.js';
import { diffDepots } from '../../src/transfer/diff.js';
import { pruneDepot } from '../../src/transfer/prune.js';
import { runCli } from '../helpers/cli.js';
import { zipFolder } from '../depot/helpers.js';
import { demoFixture, nextRelease, readCatalog, treeOf } from './helpers.js';
import { outcome, packIn } from './in-process.js';

const BINARY = 64 * 1024;

const fx = demoFixture('depotkit-prune-', BINARY);

async function put(path: string, data: string | Buffer): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, data);
}

describe('depot prune', () => {
  it('lists stale binaries and leftovers with their sizes and removes nothing; --yes removes exactly those', async () => {
    const dir = fx.fresh('depot');
    await cp(fx.depot, dir, { recursive: true });
    const stale = `${DEPOT_PATHS.comp}/VCENTER/VMware-VCSA-all-8.0.3.00000.iso`;
    const temp = `${DEPOT_PATHS.comp}/VROPS/${TEMP_PREFIX}0123456789ab-Operations.ova`;
    const partial = `${DEPOT_PATHS.comp}/VRA/${TEMP_PREFIX}partial-0123456789abcdef-vra.tar`;
    const kept = [`${DEPOT_PATHS.comp}/NSX_T_MANAGER/VMware-NSX-T-9.0.0.0.1.vlcp`, `${DEPOT_PATHS.comp}/VCENTER/vmw/3f1c/upgrade_info.xml`];
    await put(join(dir, stale), Buffer.alloc(5000));
    await put(join(dir, temp), Buffer.alloc(300));
    await put(join(dir, partial), Buffer.alloc(700));
    for (const k of kept) await put(join(dir, k), 'metadata');
    const before = await treeOf(dir);

    const listed = await pruneDepot(dir);
    expect(listed.removed).toBe(false);
    expect(listed.candidates).toEqual([
      { path: stale, size: 5000, kind: 'stale' },
      { path: partial, size: 700, kind: 'partial' },
      { path: temp, size: 300, kind: 'temporary' },
    ]);
    expect(listed.bytes).toBe(6000);
    expect(await treeOf(dir)).toEqual(before);
    // The command line once, for its human lines; the library for the rest.
    const human = await runCli(['depot', 'prune', dir]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^Would remove 3 files, 5\.9 KiB/);
    expect(human.stdout).toMatch(/Nothing was removed; run again with --yes/);

    expect((await pruneDepot(dir, { yes: true })).removed).toBe(true);
    for (const p of [stale, temp, partial]) expect(existsSync(join(dir, p))).toBe(false);
    for (const k of kept) expect(existsSync(join(dir, k))).toBe(true);
    const after = { ...before };
    for (const p of [stale, temp, partial]) delete after[p];
    expect(await treeOf(dir)).toEqual(after);
    expect((await verifyDepot(dir)).ok).toBe(true);
  });

  it('refuses a folder without a catalog (which would make every file look stale)', async () => {
    const dir = fx.fresh('depot');
    await cp(fx.depot, dir, { recursive: true });
    await rm(join(dir, DEPOT_PATHS.catalog));
    const res = await outcome(pruneDepot(dir, { yes: true }));
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/has no catalog/);
    expect(Object.keys(await treeOf(dir)).length).toBeGreaterThan(16);
  });
});

describe('depot diff', () => {
  it('says what the next release adds, changes and drops, and what must be downloaded and carried, from a depot, a metadata archive or a pack', async () => {
    const next = await nextRelease(fx.depot, fx.fresh('next'), BINARY);
    // The vendor's archive of the next release: its metadata only.
    const metadata = fx.fresh('metadata');
    const binaries = new Set(catalogBinaries(await readCatalog(next.dir)).map((b) => b.path));
    for (const path of Object.keys(await treeOf(next.dir))) if (!binaries.has(path)) await put(join(metadata, path), await readFile(join(next.dir, path)));
    const zip = join(fx.base, 'next-metadata.zip');
    await zipFolder(metadata, zip);
    const pack = fx.fresh('pack');
    expect((await packIn(next.dir, pack, { volumeSize: 1024 * 1024 })).code).toBe(0);

    const addedBytes = (await Promise.all(next.added.map((p) => stat(join(next.dir, p))))).reduce((s, i) => s + i.size, 0);
    const changedMetadata = [DEPOT_PATHS.catalog, DEPOT_PATHS.manifest, DEPOT_PATHS.hclAll].sort();
    const metadataBytes = (await Promise.all(changedMetadata.map((p) => stat(join(next.dir, p))))).reduce((s, i) => s + i.size, 0);
    for (const newer of [next.dir, zip, join(pack, 'depot-pack.json')]) {
      const diff = await diffDepots(fx.depot, newer);
      expect(diff.binaries.added.map((b) => b.path)).toEqual([...next.added].sort());
      expect(diff.binaries.dropped.map((b) => b.path)).toEqual([next.dropped]);
      expect(diff.binaries.changed).toEqual([]);
      expect(diff.binaries.unchanged).toBe(15);
      expect(diff.metadata.changed).toEqual(changedMetadata);
      expect(diff.releases).toEqual({ added: ['9.0.1.0'], dropped: [] });
      expect(diff.bytes).toEqual({ download: addedBytes, carry: addedBytes + metadataBytes, dropped: BINARY });
    }
    const human = await runCli(['depot', 'diff', fx.depot, zip]);
    expect(human.stdout).toMatch(/^Releases added: 9\.0\.1\.0$/m);
    expect(human.stdout).toMatch(/^Binaries added: 2$/m);
    expect(human.stdout).toMatch(/^To download: 128\.0 KiB; to carry across \(pack --since\): \d+\.\d KiB; freed by prune: 64\.0 KiB\.$/m);
  });

  it('refuses what is neither a depot, a metadata archive nor a pack manifest (exit 2)', async () => {
    const junk = join(fx.base, 'junk.txt');
    await writeFile(junk, 'not a depot');
    const res = await runCli(['depot', 'diff', fx.depot, junk]);
    expect(res.code).toBe(2);
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });
});
