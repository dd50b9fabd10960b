import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_ROOT_DIR, UMDS_PATCH_STORE_DIR } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { makeEsxDemo } from '../../src/esx/demo.js';
import { verifyEsx } from '../../src/esx/verify.js';
import { diffDepots } from '../../src/transfer/diff.js';
import { type PackReport, packDepot } from '../../src/transfer/pack.js';
import { unpackDepot } from '../../src/transfer/unpack.js';
import { runCli } from '../helpers/cli.js';
import { useTempDir } from '../helpers/temp.js';
import { hashedTree, twoEsxDepots } from './helpers.js';
import { unpackForeignVib, readManifest } from './tamper.js';

const VOLUME = 256 * 1024;

const tmp = useTempDir('depotkit-esx-only-');
/** A served tree: PROD/ and an ESX depot in umds-patch-store/ beside it, as `depot demo --esx` makes it. */
let depot: string;
let packDir: string;
let pack: PackReport;
const fresh = tmp.fresh;

const filesOf = (root: string) => hashedTree(root);
const esxFilesOf = (root: string) => hashedTree(root, UMDS_PATCH_STORE_DIR);

beforeAll(async () => {
  depot = join(tmp.dir, 'depot');
  await makeDemoDepot(depot, { binarySize: 1024, esx: true });
  packDir = join(tmp.dir, 'pack');
  pack = await packDepot({ depot, out: packDir, volumeSize: VOLUME, esxOnly: true });
});

describe('a pack of the ESX depots alone', () => {
  it('carries every file of the ESX depots and nothing of PROD/, under a seal that says so', async () => {
    expect(pack.ok).toBe(true);
    expect(pack.seal).toMatch(/^esx \S{29} manifest \S{29}$/);
    expect(pack.catalogSha256).toBeUndefined();
    expect(pack.esxSha256).toMatch(/^[0-9a-f]{64}$/);
    const manifest = await readManifest(packDir);
    expect(manifest.source).toEqual({ esxSha256: pack.esxSha256 });
    expect(manifest.files.filter((f) => !f.path.startsWith(`${UMDS_PATCH_STORE_DIR}/`))).toEqual([]);
    expect(Object.fromEntries(manifest.files.map((f) => [f.path, f.sha256]))).toEqual(await esxFilesOf(depot));
    expect(manifest.files.filter((f) => f.kind === 'esx-vib')).toHaveLength(6);
  });

  it('unpacks into an empty folder under its seal: the ESX depot byte for byte, no PROD/, and esx verify --deep passes', async () => {
    const out = fresh('site');
    const report = await unpackDepot({ media: [packDir], out, expect: pack.seal });
    expect(report.failed).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.holds).toBe('esx');
    expect(report.vouchedBy).toBe('seal');
    expect(report.catalogFrom).toBe('none');
    expect(report.esx?.metadata).toBe('placed');
    expect(report.esx?.depots.flatMap((d) => d.products.map((p) => p.state))).toEqual(['complete', 'complete']);
    expect(existsSync(join(out, DEPOT_ROOT_DIR))).toBe(false);
    expect(await filesOf(out)).toEqual(await esxFilesOf(depot));
    const verdict = await verifyEsx(out, { deep: true });
    expect(verdict.findings.filter((f) => f.severity !== 'info')).toEqual([]);
    expect(verdict.ok).toBe(true);
  });

  it('unpacks beside a depot without touching its PROD/', async () => {
    const site = fresh('site');
    await makeDemoDepot(site, { binarySize: 1024 });
    const before = await filesOf(join(site, DEPOT_ROOT_DIR));
    const report = await unpackDepot({ media: [packDir], out: site, expect: pack.seal });
    expect(report.ok).toBe(true);
    expect(await filesOf(join(site, DEPOT_ROOT_DIR))).toEqual(before);
    expect(await esxFilesOf(site)).toEqual(await esxFilesOf(depot));
  });

  it("replaces a depot's different ESX files only with force, as a pack of another depot's: the next patch onto the last", async () => {
    const site = fresh('site');
    expect((await unpackDepot({ media: [packDir], out: site, expect: pack.seal })).ok).toBe(true);
    const next = fresh('next');
    await makeEsxDemo(join(next, UMDS_PATCH_STORE_DIR), { vibs: 8 });
    const out = fresh('pack');
    const nextPack = await packDepot({ depot: next, out, volumeSize: VOLUME, esxOnly: true });
    await expect(unpackDepot({ media: [out], out: site, expect: nextPack.seal })).rejects.toMatchObject({ exitCode: 2 });
    const forced = await unpackDepot({ media: [out], out: site, expect: nextPack.seal, force: true });
    expect(forced.ok).toBe(true);
    expect(forced.esx?.depots.flatMap((d) => d.products.map((p) => `${p.state} ${p.vibs}`))).toEqual(['complete 8', 'complete 8']);
  });

  it('never places a tampered VIB, even on media made coherent again; the seal refuses such media whole', async () => {
    const { dir, report } = await unpackForeignVib(packDir, fresh('media'), fresh('site'));
    // The index is held back from nothing (the folder had none): vLCM would see the VIB missing, never other bytes.
    expect(report.placed.filter((p) => p.path.endsWith('.vib'))).toHaveLength(5);
    await expect(unpackDepot({ media: [dir], out: fresh('site'), expect: pack.seal })).rejects.toThrow(/does not match the seal given/);
  });

  it("refuses a depot's seal for it, and a seal of it for a depot's pack", async () => {
    const full = fresh('full-pack');
    const depotPack = await packDepot({ depot, out: full, volumeSize: VOLUME });
    await expect(unpackDepot({ media: [packDir], out: fresh('site'), expect: depotPack.seal })).rejects.toThrow(
      "The pack's ESX metadata does not match the seal given",
    );
    await expect(unpackDepot({ media: [full], out: fresh('site'), expect: pack.seal })).rejects.toThrow("The pack's catalog does not match the seal given");
  });

  it('packs a tree that has no PROD/ at all, and refuses a folder with no ESX depot', async () => {
    const tree = fresh('esx-tree');
    await makeEsxDemo(join(tree, UMDS_PATCH_STORE_DIR));
    const out = fresh('pack');
    const report = await packDepot({ depot: tree, out, volumeSize: VOLUME, esxOnly: true });
    expect(report.ok).toBe(true);
    const site = fresh('site');
    expect((await unpackDepot({ media: [out], out: site, expect: report.seal })).ok).toBe(true);
    expect(await filesOf(site)).toEqual(await filesOf(tree));
    const empty = fresh('no-esx');
    await makeDemoDepot(empty, { binarySize: 1024 });
    await expect(packDepot({ depot: empty, out: fresh('pack'), volumeSize: VOLUME, esxOnly: true })).rejects.toThrow(/holds no ESX depot/);
  });

  it('refuses what does not go with it before anything is written', async () => {
    const out = fresh('pack');
    await expect(packDepot({ depot, out, volumeSize: VOLUME, esxOnly: true, esx: false })).rejects.toMatchObject({ exitCode: 2 });
    await expect(packDepot({ depot, out, volumeSize: VOLUME, esxOnly: true, select: { releases: ['9.0.0.0'] } })).rejects.toMatchObject({ exitCode: 2 });
    expect(existsSync(out)).toBe(false);
  });

  it('carries only the VIBs of the ESX products and versions chosen, as esx mirror chooses them; the others arrive as metadata only', async () => {
    const tree = await twoEsxDepots(fresh('two-esx'));
    const out = fresh('pack');
    const chosen = await packDepot({ depot: tree, out, volumeSize: VOLUME, esxOnly: true, esxSelect: { products: ['embeddedEsx'], versions: ['9.*'] } });
    expect(chosen.ok).toBe(true);
    expect(chosen.esx?.selection).toMatchObject({ products: ['embeddedEsx'], versions: ['9.*'], chosen: ['embeddedEsx 9.*'], leftOut: { vibs: 6 } });
    expect(chosen.esx?.missing).toEqual([]);
    const m = await readManifest(out);
    expect(m.files.filter((f) => f.kind === 'esx-vib').map((f) => f.path.split('/')[0])).toEqual(Array(6).fill(UMDS_PATCH_STORE_DIR));
    // Every metadata zip is carried still.
    expect(m.esx?.metadata.map((z) => z.path.split('/')[0]).sort()).toEqual(['esx-8', UMDS_PATCH_STORE_DIR]);
    const site = fresh('site');
    const report = await unpackDepot({ media: [out], out: site, expect: chosen.seal });
    expect(report.failed).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.esx?.depots.flatMap((d) => d.products.map((p) => `${d.folder} ${p.productId} ${p.version} ${p.state}`)).sort()).toEqual([
      'esx-8 embeddedEsx 8.* metadata-only',
      'esx-8 esxio 8.* metadata-only',
      `${UMDS_PATCH_STORE_DIR} embeddedEsx 9.* complete`,
      `${UMDS_PATCH_STORE_DIR} esxio 9.* complete`,
    ]);
    await expect(packDepot({ depot: tree, out: fresh('pack'), volumeSize: VOLUME, esxOnly: true, esxSelect: { products: ['nothing'] } })).rejects.toThrow(
      /^No product of the depot matches nothing; it offers: (?=.*embeddedEsx 8\.\*)(?=.*esxio 9\.\*)/,
    );
  });

  it('diff reads its manifest: the ESX products and VIBs, no PROD/ binary', async () => {
    const diff = await diffDepots(join(packDir, 'depot-pack.json'), depot);
    expect(diff.esx?.vibs.unchanged).toBe(6);
    expect(diff.esx?.vibs.added).toEqual([]);
  });
});

describe('depot pack --esx-only on the command line', () => {
  it('packs the ESX depots alone; unpack places them and esx verify --deep passes, no PROD/ written', async () => {
    const out = fresh('cli-pack');
    const packed = await runCli(['depot', 'pack', depot, '--out', out, '--volume-size', '256K', '--esx-only']);
    expect(packed.code).toBe(0);
    expect(packed.stdout).toContain(`ESX depots carried: ${UMDS_PATCH_STORE_DIR}`);
    expect(packed.stdout).toContain('(the ESX depots alone, not PROD/)');
    const seal = /Seal: (.+)/.exec(packed.stdout)![1]!;
    expect(seal).toMatch(/^esx \S+ manifest \S+$/);
    const site = fresh('cli-site');
    const unpacked = await runCli(['depot', 'unpack', out, '--out', site, '--expect', seal]);
    expect(unpacked.code).toBe(0);
    expect(unpacked.stdout).toContain(`The seal given matches (${seal}): the ESX metadata and the manifest are the ones packed.`);
    expect(unpacked.stdout).toMatch(/^OK: .+ holds the ESX depots the pack carries \(not PROD\/\)/m);
    expect(existsSync(join(site, DEPOT_ROOT_DIR))).toBe(false);
    const verified = await runCli(['esx', 'verify', site, '--deep']);
    expect(verified.code).toBe(0);
    // Next month's patch crosses as a delta against what the site has: here, nothing new.
    const delta = await runCli(['depot', 'pack', depot, '--out', fresh('cli-delta'), '--volume-size', '256K', '--esx-only', '--since', site, '--json']);
    expect(delta.code).toBe(0);
    const report = JSON.parse(delta.stdout) as PackReport;
    expect(report).toMatchObject({ delta: true, files: 0, removed: [], since: { kind: 'depot', catalogSha256: null, esxSha256: report.esxSha256 } });
    const refused = await runCli(['depot', 'pack', depot, '--out', fresh('cli-pack'), '--esx-only', '--no-esx']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--esx-only carries the ESX depots alone and --no-esx leaves them out');
  });
});
