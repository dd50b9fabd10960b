import { existsSync } from 'node:fs';
import { cp, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_ROOT_DIR, UMDS_PATCH_STORE_DIR } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { makeEsxDemo } from '../../src/esx/demo.js';
import { verifyEsx } from '../../src/esx/verify.js';
import { diffDepots } from '../../src/transfer/diff.js';
import { type PackManifest, parseManifest } from '../../src/transfer/format.js';
import type { PackReport } from '../../src/transfer/pack.js';
import { pruneDepot } from '../../src/transfer/prune.js';
import { tempDir } from '../helpers/temp.js';
import { hashedTree, treeOf, twoEsxDepots } from './helpers.js';
import { packIn, packText, unpackIn, unpackText } from './in-process.js';
import { packWithForeignVib, readManifest } from './tamper.js';

/**
 * A site that patches hosts only: month 1's ESX depot crossed whole, month 2's patch crosses as a delta of the ESX
 * depots alone against what the site has (a pack manifest, the site's folder, or a depot with PROD/ beside them).
 */

let base: string;
let cleanup: () => Promise<void>;
let n = 0;
const fresh = (name: string) => join(base, `${name}-${n++}`);

const ESX = UMDS_PATCH_STORE_DIR;
const PATCH_2 = 'depotkit-demo-ESXi-9.0.0-p2-metadata.zip';
/** The VIB month 2's metadata no longer lists (still on disk there, as a mirror leaves it). */
const DROPPED = `${ESX}/vib20/demo-esxi-0001/DKD_bootbank_demo-esxi-0001_9.0.0-0.0.24755229.vib`;
const ADDED = [7, 8, 9]
  .map((i) => {
    const name = `demo-${['esxi', 'nic-driver', 'host-tools'][(i - 1) % 3]}-${String(i).padStart(4, '0')}`;
    return `${ESX}/vib20/${name}/DKD_bootbank_${name}_9.0.0-0.0.24755229.vib`;
  })
  .sort();

/** The connected side in month 1: PROD/ and the ESX depot beside it. */
let month1: string;
let month1Pack: PackReport;
let month1Manifest: string;
/** The site after month 1: the ESX depot alone, no PROD/. */
let site1: string;
/** Month 2: a new metadata zip listing VIBs 2 to 9 (three new), VIB 1 no longer listed. */
let month2: string;

const esxFilesOf = (root: string) => hashedTree(root, ESX);
const copyOf = async (dir: string, name: string) => {
  const to = fresh(name);
  await cp(dir, to, { recursive: true });
  return to;
};

/** Month 2's next patch over a copy of `dir`'s ESX depot. */
async function nextPatch(dir: string): Promise<string> {
  const to = await copyOf(dir, 'month2');
  await makeEsxDemo(join(to, ESX), { vibs: 8, firstVib: 2, metadata: PATCH_2, force: true });
  return to;
}

beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir('depotkit-esx-delta-'));
  month1 = join(base, 'month1');
  await makeDemoDepot(month1, { binarySize: 1024, esx: true });
  const packDir = join(base, 'month1-pack');
  month1Pack = (await packIn(month1, packDir, { esxOnly: true })).report;
  month1Manifest = join(packDir, 'depot-pack.json');
  site1 = join(base, 'site1');
  expect((await unpackIn([packDir], site1, { expect: month1Pack.seal })).report.ok).toBe(true);
  month2 = await nextPatch(month1);
});
afterAll(() => cleanup());

/** A delta of month 2's ESX depots against `since`, checked to carry only the new files and remove only the dropped VIB. */
async function delta(since: string, kind: 'pack' | 'depot') {
  const out = fresh('delta');
  const { code, report, stderr } = await packIn(month2, out, { esxOnly: true, since });
  expect(stderr).toBe('');
  expect(code).toBe(0);
  expect(report.delta).toBe(true);
  expect(report.since).toMatchObject({ kind, catalogSha256: null, esxSha256: month1Pack.esxSha256 });
  const manifest = await readManifest(out);
  expect(manifest.files.map((f) => f.path).sort()).toEqual([...ADDED, `${ESX}/${PATCH_2}`, `${ESX}/vendor-index.xml`].sort());
  expect(manifest.removed).toEqual([DROPPED]);
  expect(report.removed).toEqual([DROPPED]);
  expect(manifest.since).toMatchObject({ esxSha256: month1Pack.esxSha256, kind });
  expect(manifest.since).not.toHaveProperty('catalogSha256');
  return { out, report, manifest };
}

describe('a delta of the ESX depots alone (pack --esx-only --since)', () => {
  let made: { out: string; report: PackReport; manifest: PackManifest };
  beforeAll(async () => {
    made = await delta(month1Manifest, 'pack');
    expect(made.manifest.since?.packId).toBe(month1Pack.packId);
  });

  it("against month 1's manifest carries only the new metadata zip, the vendor index and the new VIBs, named as a whole month 2 is", async () => {
    expect(made.report.ok).toBe(true);
    expect(made.report.unchanged.files).toBeGreaterThan(0);
    expect(packText(made.report)).toContain(`A delta of the ESX depots alone against ${month1Manifest}`);
    // Its source is named as a whole pack of month 2 names it: the seal's ESX code is the same.
    const whole = (await packIn(month2, fresh('whole'), { esxOnly: true })).report;
    expect(made.report.esxSha256).toBe(whole.esxSha256);
    expect(made.report.seal.split(' manifest ')[0]).toBe(whole.seal.split(' manifest ')[0]);
  });

  it("unpacked onto month 1's site under its seal gives month 2's ESX depot, esx verify --deep finds no error; a second run is a resumed one", async () => {
    const site = await copyOf(site1, 'site');
    const { code, report } = await unpackIn([made.out], site, { expect: made.report.seal });
    expect(report.failed).toEqual([]);
    expect(code).toBe(0);
    expect(report).toMatchObject({ delta: true, holds: 'esx', vouchedBy: 'seal', stale: [DROPPED] });
    expect(report.placed.map((p) => p.path).sort()).toEqual(made.manifest.files.map((f) => f.path).sort());
    expect(unpackText(report)).toMatch(/^OK: .+ holds the ESX depots of the pack's source: the delta went onto the ESX depots it was made against/m);
    expect(await esxFilesOf(site)).toEqual(await esxFilesOf(month2));
    expect(existsSync(join(site, DEPOT_ROOT_DIR))).toBe(false);
    const verdict = await verifyEsx(site, { deep: true });
    expect(verdict.findings.filter((f) => f.severity === 'error')).toEqual([]);
    // VIB 1 is still there, listed by no metadata: a warning until prune removes it.
    expect(verdict.findings.filter((f) => f.severity === 'warning').map((f) => f.id)).toEqual(['esx.vib.unlisted']);
    const again = await unpackIn([made.out], site, { expect: made.report.seal });
    expect(again.code).toBe(0);
    expect(again.report.placed).toEqual([]);
  });

  it('against the site folder itself (no PROD/) carries the same, and unpacks there; prune there removes the VIB no longer listed', async () => {
    const site = await copyOf(site1, 'site');
    const { out, report } = await delta(site, 'depot');
    const unpacked = await unpackIn([out], site, { expect: report.seal });
    expect(unpacked.code).toBe(0);
    expect(await esxFilesOf(site)).toEqual(await esxFilesOf(month2));
    // The command unpack prints runs on a site without PROD/.
    expect(unpackText(unpacked.report)).toContain(`1 file the pack's source no longer has is still here: depotkit depot prune ${site} lists them.`);
    const pruned = await pruneDepot(site, { yes: true });
    expect(pruned.candidates.map((c) => [c.kind, c.path])).toEqual([['unlisted', DROPPED]]);
    expect(existsSync(join(site, DROPPED))).toBe(false);
    expect((await verifyEsx(site, { deep: true })).findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });

  it('goes only onto the ESX depots it was made against: elsewhere refused, nothing written, unless force', async () => {
    const empty = fresh('empty');
    const refused = await unpackIn([made.out], empty);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/is a delta of ESX depots made against other ESX depots than .+ holds \(none\)/);
    expect(refused.stderr).toContain('or unpack a whole pack of them first (packed with --esx-only, without --since); --force unpacks it anyway.');
    expect(existsSync(empty)).toBe(false);
    const other = fresh('other');
    await makeEsxDemo(join(other, ESX), { vibs: 4 });
    const before = await hashedTree(other);
    const wrong = await unpackIn([made.out], other);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('(other metadata)');
    expect(await hashedTree(other)).toEqual(before);
    const forced = await unpackIn([made.out], other, { force: true });
    expect(forced.report).toMatchObject({ delta: true, holds: 'esx', failed: [] });
  });

  it('never places a tampered VIB of the delta; the seal refuses such media whole', async () => {
    const { dir, vib } = await packWithForeignVib(made.out, fresh('media'));
    const site = await copyOf(site1, 'site');
    const { report } = await unpackIn([dir], site);
    expect(report.ok).toBe(false);
    expect(report.failed.find((f) => f.path === vib.path)?.reason).toBe("its SHA-256 in the manifest is not its metadata's");
    expect(existsSync(join(site, vib.path))).toBe(false);
    // The new metadata is held back: vLCM keeps reading month 1's, whose VIBs are all there.
    expect(report.esx?.metadata).toBe('held');
    const sealed = await unpackIn([dir], await copyOf(site1, 'site'), { expect: made.report.seal });
    expect(sealed.code).toBe(1);
    expect(sealed.stderr).toContain('does not match the seal given');
  });

  it('diff reads its manifest against the base: the VIBs added and no longer listed, the new metadata zip, no PROD/ binary', async () => {
    for (const older of [month1Manifest, site1]) {
      const diff = await diffDepots(older, join(made.out, 'depot-pack.json'));
      expect(diff.esx?.vibs.added.map((v) => v.path)).toEqual(ADDED);
      expect(diff.esx?.vibs.removed.map((v) => v.path)).toEqual([DROPPED]);
      expect(diff.esx?.metadata.added).toEqual([`${ESX}/${PATCH_2}`]);
      expect(diff.esx?.metadata.changed).toEqual([`${ESX}/vendor-index.xml`]);
      expect(diff.binaries).toMatchObject({ added: [], dropped: [], unchanged: 0 });
    }
  });

  it('is held to its schema and rules: a choice of binaries, a base without its ESX metadata, a PROD/ file removed are refused', () => {
    const text = (change: (m: PackManifest) => void) => {
      const m = structuredClone(made.manifest);
      change(m);
      return () => parseManifest(JSON.stringify(m), 'm.json');
    };
    expect(text(() => undefined)()).toMatchObject({ since: made.manifest.since });
    const summary = { releases: [], components: [], chosen: { binaries: 0, bytes: 0 }, leftOut: { binaries: 0, bytes: 0 } };
    expect(text((m) => void (m.selection = summary))).toThrow(
      /m\.json is not a depotkit pack manifest: a pack of ESX depots alone is not a choice of binaries/,
    );
    expect(text((m) => void (m.since = { catalogSha256: null, kind: 'pack' }))).toThrow(/names no ESX metadata it was made against/);
    expect(text((m) => void (m.since = { kind: 'pack' } as unknown as PackManifest['since']))).toThrow(/\/since must have required property/);
    expect(text((m) => void m.removed.push('PROD/COMP/VCENTER/vcenter.iso'))).toThrow(/holds ESX depots alone and removes PROD\/COMP\/VCENTER\/vcenter\.iso/);
    expect(text((m) => void (m.tree.find((t) => t.path.endsWith(PATCH_2))!.sha256 = 'e'.repeat(64)))).toThrow(/other ESX metadata as its source/);
  });
});

describe('the base of a delta of the ESX depots alone', () => {
  it('may hold PROD/ (a depot or a whole pack of it): only the ESX files are compared, no PROD/ file is removed', async () => {
    const full = fresh('full-pack');
    expect((await packIn(month1, full)).code).toBe(0);
    for (const [since, kind] of [
      [month1, 'depot'],
      [join(full, 'depot-pack.json'), 'pack'],
    ] as const)
      await delta(since, kind);
  });

  it('unpacks onto a depot with PROD/, PROD/ untouched; prune then removes only the VIB the new metadata no longer lists', async () => {
    const { out, report } = await delta(month1, 'depot');
    const site = await copyOf(month1, 'site');
    const prod = await treeOf(site);
    expect((await unpackIn([out], site, { expect: report.seal })).code).toBe(0);
    expect(await treeOf(site)).toEqual(prod);
    const dry = await pruneDepot(site);
    expect(dry.candidates.map((c) => [c.kind, c.path])).toEqual([['unlisted', DROPPED]]);
    await pruneDepot(site, { yes: true });
    expect(existsSync(join(site, DROPPED))).toBe(false);
    expect(await treeOf(site)).toEqual(prod);
    const verdict = await verifyEsx(site, { deep: true });
    expect(verdict.findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });

  it('must hold ESX depots: a depot without any, or an empty folder, is refused in a sentence; a depot delta against ESX depots alone too', async () => {
    const plain = fresh('plain');
    await makeDemoDepot(plain, { binarySize: 1024 });
    const out = fresh('pack');
    const none = await packIn(month2, out, { esxOnly: true, since: plain });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^--since .+ holds no ESX depot: a delta of the ESX depots alone is made against the ESX depots the other side has\./);
    const empty = fresh('empty');
    await mkdir(empty);
    const neither = await packIn(month2, out, { esxOnly: true, since: empty });
    expect(neither.stderr).toMatch(/has no PROD\/ folder and holds no ESX depot/);
    const depotDelta = await packIn(month2, out, { since: site1 });
    expect(depotDelta.code).toBe(2);
    expect(depotDelta.stderr).toMatch(/holds ESX depots alone, no PROD\/: a depot's delta is made against a depot/);
    expect(existsSync(out)).toBe(false);
  });

  it('keeps the choice of ESX products: VIBs only other products list are neither carried nor removed', async () => {
    const tree = await twoEsxDepots(fresh('two-esx'));
    const first = fresh('pack');
    expect((await packIn(tree, first, { esxOnly: true })).code).toBe(0);
    const next = await nextPatch(tree);
    const out = fresh('pack');
    const chosen = await packIn(next, out, {
      esxOnly: true,
      since: join(first, 'depot-pack.json'),
      esxSelect: { products: ['embeddedEsx'], versions: ['9.*'] },
    });
    expect(chosen.code).toBe(0);
    const m = await readManifest(out);
    expect(m.files.filter((f) => f.kind === 'esx-vib').map((f) => f.path)).toEqual(ADDED);
    expect(m.removed).toEqual([DROPPED]);
  });
});
