import { existsSync } from 'node:fs';
import { cp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { UMDS_PATCH_STORE_DIR } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { makeEsxDemo } from '../../src/esx/demo.js';
import { verifyEsx } from '../../src/esx/verify.js';
import { diffDepots } from '../../src/transfer/diff.js';
import { pruneDepot } from '../../src/transfer/prune.js';
import type { PackFile, PackManifest } from '../../src/transfer/format.js';
import { type PackReport, packDepot } from '../../src/transfer/pack.js';
import { unpackDepot } from '../../src/transfer/unpack.js';
import { runCli } from '../helpers/cli.js';
import { useTempDir } from '../helpers/temp.js';
import { hashedTree, sha256, treeOf } from './helpers.js';
import { copyPack, unpackForeignVib, readManifest, writeManifest } from './tamper.js';

const VOLUME = 256 * 1024;

const tmp = useTempDir('depotkit-esx-carry-');
let depot: string;
/** The same depot with the next ESX patch: two more VIBs and a new metadata zip. */
let next: string;
let packDir: string;
let pack: PackReport;
let manifest: PackManifest;
const fresh = tmp.fresh;

/** Every file of the ESX depot folder with its SHA-256 (none when there is no such folder). */
const esxTreeOf = (root: string) => hashedTree(root, UMDS_PATCH_STORE_DIR, true);

const vibOf = (m: PackManifest, skip = 0): PackFile => m.files.filter((f) => f.kind === 'esx-vib')[skip]!;

beforeAll(async () => {
  depot = join(tmp.dir, 'depot');
  // As `depot demo --esx` makes it: PROD/ and an ESX depot in umds-patch-store/ beside it.
  await makeDemoDepot(depot, { binarySize: 1024, esx: true });
  packDir = join(tmp.dir, 'pack');
  pack = await packDepot({ depot, out: packDir, volumeSize: VOLUME });
  manifest = await readManifest(packDir);
  next = join(tmp.dir, 'next');
  await cp(depot, next, { recursive: true });
  await makeEsxDemo(join(next, UMDS_PATCH_STORE_DIR), { vibs: 8, force: true });
});

describe('depot pack and unpack carry the ESX depot beside PROD/', () => {
  it('lists every file of the ESX depot in the sealed manifest with its SHA-256, the VIBs held to their metadata', async () => {
    expect(pack.ok).toBe(true);
    expect(pack.esx?.depots).toEqual([UMDS_PATCH_STORE_DIR]);
    expect(pack.esx?.products.map((p) => [p.productId, p.state])).toEqual([
      ['embeddedEsx', 'complete'],
      ['esxio', 'complete'],
    ]);
    const source = await esxTreeOf(depot);
    const carried = Object.fromEntries(manifest.files.filter((f) => f.path.startsWith(`${UMDS_PATCH_STORE_DIR}/`)).map((f) => [f.path, f.sha256]));
    expect(carried).toEqual(source);
    expect(manifest.files.filter((f) => f.kind === 'esx-vib')).toHaveLength(6);
    expect(manifest.esx?.depots).toEqual([{ folder: UMDS_PATCH_STORE_DIR, kind: 'index', index: `${UMDS_PATCH_STORE_DIR}/index.xml` }]);
    expect(manifest.esx?.metadata.map((m) => m.path)).toEqual([`${UMDS_PATCH_STORE_DIR}/depotkit-demo-ESXi-9.0.0-metadata.zip`]);
    // The manifest's bytes are the seal's: the ESX files are under it.
    expect(pack.seal).toMatch(/^catalog \S+ manifest \S+$/);
    expect(pack.volumes.length).toBeGreaterThan(1);
  });

  it('round trip: the ESX depot arrives byte for byte, judged complete, under the seal', async () => {
    const out = fresh('site');
    const report = await unpackDepot({ media: [packDir], out, expect: pack.seal });
    expect(report.failed).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.vouchedBy).toBe('seal');
    expect(report.esx?.metadata).toBe('placed');
    expect(report.esx?.depots.flatMap((d) => d.products.map((p) => p.state))).toEqual(['complete', 'complete']);
    expect(await esxTreeOf(out)).toEqual(await esxTreeOf(depot));
    expect(await treeOf(out)).toEqual(await treeOf(depot));
  });

  it('never places a VIB whose bytes the metadata does not vouch for, even on media made coherent again', async () => {
    const { report } = await unpackForeignVib(packDir, fresh('media'), fresh('site'));
    // Its metadata is the manifest's (the root index and the metadata zip): the other VIBs are placed.
    expect(report.placed.filter((p) => p.path.endsWith('.vib'))).toHaveLength(5);
  });

  it('refuses a VIB the metadata does not list, passed off as another file of the depot', async () => {
    const dir = await copyPack(packDir, fresh('media'));
    const m = await readManifest(dir);
    const vib = vibOf(m, 1);
    vib.path = `${UMDS_PATCH_STORE_DIR}/vib20/extra/DKD_bootbank_extra.vib`;
    vib.kind = 'esx-metadata';
    await writeManifest(dir, m);
    const out = fresh('site');
    const report = await unpackDepot({ media: [dir], out });
    expect(report.failed.find((f) => f.path === vib.path)?.reason).toBe('a VIB file that no metadata zip of the pack lists');
    expect(existsSync(join(out, vib.path))).toBe(false);
  });

  it('refuses a manifest that puts a file outside PROD/ and the ESX folders, or a PROD/ kind in an ESX folder, before anything is written', async () => {
    for (const change of [(f: PackFile) => void (f.path = 'etc/cron.d/x.vib'), (f: PackFile) => void (f.kind = 'metadata')]) {
      const dir = await copyPack(packDir, fresh('media'));
      const m = await readManifest(dir);
      change(vibOf(m, 2));
      await writeManifest(dir, m);
      const out = fresh('site');
      await expect(unpackDepot({ media: [dir], out })).rejects.toThrow(
        /not a plain path under PROD\/ or in an ESX depot's folder|of kind metadata in an ESX depot's folder/,
      );
      expect(existsSync(out)).toBe(false);
    }
  });

  it('refuses media whose metadata zip and VIB were swapped together when the seal is given', async () => {
    const dir = await copyPack(packDir, fresh('media'));
    const m = await readManifest(dir);
    const zip = m.files.find((f) => f.path.endsWith('-metadata.zip'))!;
    zip.sha256 = sha256('another metadata zip');
    m.esx!.metadata[0]!.sha256 = zip.sha256;
    await writeManifest(dir, m);
    const out = fresh('site');
    await expect(unpackDepot({ media: [dir], out, expect: pack.seal })).rejects.toThrow(/manifest/);
    expect(existsSync(join(out, UMDS_PATCH_STORE_DIR))).toBe(false);
  });

  it('a missing volume fails the VIBs in it and holds the new ESX indexes back from a depot that has its own; a re-run with it completes', async () => {
    // The site serves the older ESX depot; the pack brings the next patch (two more VIBs, a new metadata zip).
    const out = fresh('site');
    await cp(depot, out, { recursive: true });
    const packed = fresh('next-pack');
    await packDepot({ depot: next, out: packed, volumeSize: VOLUME });
    const m = await readManifest(packed);
    const known = new Set(Object.keys(await esxTreeOf(depot)));
    // A new VIB in another volume than the metadata zip (without which no VIB can be vouched for).
    const zipVolume = m.files.find((f) => f.path.endsWith('-metadata.zip'))!.pieces[0]!.volume;
    const vib = m.files.find((f) => f.kind === 'esx-vib' && !known.has(f.path) && f.pieces.every((p) => p.volume !== zipVolume))!;
    const volume = m.volumes[vib.pieces[0]!.volume - 1]!.name;
    const held = `${fresh('held')}.tar`;
    await cp(join(packed, volume), held);
    await rm(join(packed, volume));
    const first = await unpackDepot({ media: [packed], out });
    expect(first.ok).toBe(false);
    expect(first.failed.map((f) => f.path)).toContain(vib.path);
    expect(first.esx?.metadata).toBe('held');
    expect(existsSync(join(out, vib.path))).toBe(false);
    // vLCM still reads the old metadata, whose VIBs are all there.
    expect(await esxTreeOf(out)).toMatchObject(await esxTreeOf(depot));
    expect(first.esx?.depots.flatMap((d) => d.products.map((p) => `${p.state} ${p.vibs}`))).toEqual(['complete 6', 'complete 6']);
    await cp(held, join(packed, volume));
    const second = await unpackDepot({ media: [packed], out });
    expect(second.ok).toBe(true);
    expect(second.esx?.metadata).toBe('placed');
    expect(second.placed.map((p) => p.path)).toContain(vib.path);
    expect(await esxTreeOf(out)).toEqual(await esxTreeOf(next));
  });

  it('leaves the ESX depot out with esx: false', async () => {
    const out = fresh('pack');
    const report = await packDepot({ depot, out, volumeSize: VOLUME, esx: false });
    expect(report.esx).toBeUndefined();
    const m = await readManifest(out);
    expect(m.esx).toBeUndefined();
    expect(m.files.some((f) => f.path.startsWith(`${UMDS_PATCH_STORE_DIR}/`))).toBe(false);
  });
});

describe('through the built CLI', () => {
  it('depot pack and unpack carry the ESX depot; --no-esx leaves it out', async () => {
    const out = fresh('cli-pack');
    const packed = await runCli(['depot', 'pack', depot, '--out', out, '--volume-size', '256K']);
    expect(packed.code).toBe(0);
    expect(packed.stdout).toContain(`ESX depots carried: ${UMDS_PATCH_STORE_DIR}`);
    expect(packed.stdout).toContain('ESX embeddedEsx 9.*');
    const seal = /Seal: (.+)/.exec(packed.stdout)![1]!;
    const site = fresh('cli-site');
    const unpacked = await runCli(['depot', 'unpack', out, '--out', site, '--expect', seal]);
    expect(unpacked.code).toBe(0);
    expect(unpacked.stdout).toMatch(/ESX esxio 9\.\* \(.+\): complete \(6 VIBs\)/);
    expect(await esxTreeOf(site)).toEqual(await esxTreeOf(depot));
    const without = fresh('cli-pack');
    const left = await runCli(['depot', 'pack', depot, '--out', without, '--volume-size', '256K', '--no-esx', '--json']);
    expect(left.code).toBe(0);
    expect((JSON.parse(left.stdout) as PackReport).esx).toBeUndefined();
  });
});

describe('depot diff, pack --since and prune see the ESX depot', () => {
  it('diff names the ESX products changed and the VIBs added; the delta carries only those and unpacks onto the old depot', async () => {
    const diff = await diffDepots(depot, next);
    expect(diff.esx?.products.changed.map((p) => p.productId)).toEqual(['embeddedEsx', 'esxio']);
    expect(diff.esx?.products.added).toEqual([]);
    expect(diff.esx?.vibs.added).toHaveLength(2);
    expect(diff.esx?.vibs.unchanged).toBe(6);
    expect(diff.esx?.metadata.changed).toEqual([`${UMDS_PATCH_STORE_DIR}/depotkit-demo-ESXi-9.0.0-metadata.zip`]);
    expect(diff.binaries.added).toEqual([]);
    const added = diff.esx!.vibs.added.reduce((s, v) => s + v.size, 0);
    expect(diff.bytes.download).toBe(added);

    const out = fresh('delta');
    const delta = await packDepot({ depot: next, out, volumeSize: VOLUME, since: depot });
    expect(delta.ok).toBe(true);
    const m = await readManifest(out);
    expect(m.files.filter((f) => f.kind === 'esx-vib').map((f) => f.path)).toEqual(diff.esx!.vibs.added.map((v) => v.path));
    expect(m.files.filter((f) => f.kind === 'esx-metadata').map((f) => f.path)).toEqual(diff.esx!.metadata.changed);
    const site = fresh('site');
    await cp(depot, site, { recursive: true });
    const report = await unpackDepot({ media: [out], out: site, expect: delta.seal });
    expect(report.failed).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.esx?.depots.flatMap((d) => d.products.map((p) => `${p.state} ${p.vibs}`))).toEqual(['complete 8', 'complete 8']);
    expect(await esxTreeOf(site)).toEqual(await esxTreeOf(next));
  });

  it('prune lists the VIBs no metadata lists any more (dry run), and removes them with yes', async () => {
    const site = fresh('prune');
    await cp(depot, site, { recursive: true });
    // The metadata of a smaller patch: four of the six VIBs stay listed.
    await makeEsxDemo(join(site, UMDS_PATCH_STORE_DIR), { vibs: 4, force: true });
    const dry = await pruneDepot(site);
    expect(dry.removed).toBe(false);
    expect(dry.candidates.map((c) => [c.kind, c.path.split('/')[2]])).toEqual([
      ['unlisted', 'demo-host-tools-0006'],
      ['unlisted', 'demo-nic-driver-0005'],
    ]);
    expect(dry.candidates.every((c) => existsSync(join(site, c.path)))).toBe(true);
    const done = await pruneDepot(site, { yes: true });
    expect(done.candidates).toEqual(dry.candidates);
    expect(dry.candidates.some((c) => existsSync(join(site, c.path)))).toBe(false);
    const verdict = await verifyEsx(join(site, UMDS_PATCH_STORE_DIR));
    expect(verdict.findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });
});
