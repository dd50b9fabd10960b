import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, readdir, rename, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS, TEMP_PREFIX } from '../../src/constants.js';
import type { PackManifest } from '../../src/transfer/format.js';
import { pruneDepot } from '../../src/transfer/prune.js';
import type { UnpackReport } from '../../src/transfer/unpack.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { demo, demoFixture, flipByte, identities, nextRelease, treeOf } from './helpers.js';
import { packIn, unpackIn as unpack, unpackText } from './in-process.js';
import { until } from '../helpers/poll.js';
import { ended } from '../helpers/ports.js';

const BINARY = 200 * 1024;

let packDir: string;
let manifest: PackManifest;

const fx = demoFixture('depotkit-unpack-', BINARY);

beforeAll(async () => {
  packDir = join(fx.base, 'pack');
  expect((await packIn(fx.depot, packDir)).code).toBe(0);
  manifest = JSON.parse(await readFile(join(packDir, 'depot-pack.json'), 'utf8')) as PackManifest;
});

/** A copy of the pack to damage. */
async function media(): Promise<string> {
  const dir = fx.fresh('media');
  await cp(packDir, dir, { recursive: true });
  return dir;
}

/** The files with a piece in volume `index`, and the rest. */
function filesIn(index: number): { inside: string[]; outside: string[] } {
  const inside = manifest.files.filter((f) => f.pieces.some((p) => p.volume === index)).map((f) => f.path);
  return { inside, outside: manifest.files.map((f) => f.path).filter((p) => !inside.includes(p)) };
}

async function tempsUnder(root: string): Promise<string[]> {
  const all = await readdir(root, { recursive: true });
  return all.filter((p) => p.split('/').pop()!.startsWith(TEMP_PREFIX));
}

describe('depot unpack', () => {
  it("places every file from volumes spread over several folders, byte for byte, and ends with verify's checks", async () => {
    const [discA, discB] = [fx.fresh('disc-a'), fx.fresh('disc-b')];
    await mkdir(discA);
    await mkdir(discB);
    // The manifest and checksums travel on the first disc only; volumes alternate.
    for (const name of await readdir(packDir)) {
      const volume = manifest.volumes.find((v) => v.name === name);
      await cp(join(packDir, name), join(volume && volume.index % 2 === 0 ? discB : discA, name));
    }
    const out = fx.fresh('out');
    const { code, report } = await unpack([discA, discB], out);
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.volumes.every((v) => v.state === 'ok')).toBe(true);
    expect(report.placed).toHaveLength(manifest.files.length);
    expect(report.verify.ok).toBe(true);
    expect(report.releases).toEqual([expect.objectContaining({ version: '9.0.0.0', complete: true })]);
    expect(await treeOf(out)).toEqual(await treeOf(fx.depot));
    expect(await tempsUnder(out)).toEqual([]);

    // Again: everything is remembered as verified; no volume is read, no file rewritten.
    const before = await identities(out, Object.keys(await treeOf(out)));
    const again = await unpack([discA, discB], out);
    expect(again.code).toBe(0);
    expect(again.report.bytesRead).toBe(0);
    expect(again.report.bytesHashedInPlace).toBe(0);
    expect(again.report.alreadyInPlace).toHaveLength(manifest.files.length);
    expect(again.report.volumes.every((v) => v.state === 'not-needed')).toBe(true);
    expect(await identities(out, Object.keys(before))).toEqual(before);
  });

  it.each([
    ['damaged', 'corrupt', async (path: string, data: number) => flipByte(path, data)],
    ['truncated', 'truncated', async (path: string, data: number) => truncate(path, data + 10)],
    ['missing', 'missing', async (path: string) => rm(path)],
  ] as const)(
    'a %s volume is named (exit 1), what the others hold is placed, nothing wrong reaches a final path; with the volume back, a re-run completes without rewriting',
    async (_kind, state, damage) => {
      const dir = await media();
      const index = 3;
      const volume = manifest.volumes[index - 1]!;
      const { inside, outside } = filesIn(index);
      // Damage the data of the first file that starts in this volume.
      const piece = manifest.files.flatMap((f) => f.pieces).find((p) => p.volume === index && p.length > 100)!;
      await damage(join(dir, volume.name), piece.dataOffset + 50);
      const out = fx.fresh('out');
      const first = await unpack([dir], out);
      expect(first.code).toBe(1);
      expect(first.report.volumes[index - 1]).toMatchObject({ name: volume.name, state });
      const failed = first.report.failed.map((f) => f.path);
      expect(failed.length).toBeGreaterThan(0);
      for (const path of failed) {
        expect(inside).toContain(path);
        expect(existsSync(join(out, path))).toBe(false);
      }
      for (const path of outside) expect(existsSync(join(out, path))).toBe(true);
      expect(await tempsUnder(out)).toEqual([]);
      const human = unpackText(first.report);
      expect(human).toContain(`ERROR volume ${volume.name}`);
      expect(human).toMatch(/^INCOMPLETE: fix the volumes named above/m);
      // Each binary the volume held is advised from the media, not from a download and a build.
      expect(human).toContain('It is on the media: supply the volume named above');
      expect(human).not.toContain('Download it and run');

      // The medium is fixed: only what was missing is read and placed.
      await cp(join(packDir, volume.name), join(dir, volume.name));
      const placed = first.report.placed.map((p) => p.path);
      const before = await identities(out, placed);
      const second = await unpack([dir], out);
      expect(second.code).toBe(0);
      expect(second.report.placed.map((p) => p.path).sort()).toEqual(failed.sort());
      expect(second.report.alreadyInPlace.map((p) => p.path).sort()).toEqual(placed.sort());
      expect(second.report.bytesHashedInPlace).toBe(0);
      expect(await identities(out, placed)).toEqual(before);
      expect(await treeOf(out)).toEqual(await treeOf(fx.depot));
    },
  );

  it('a killed unpack (SIGKILL) resumes: the tree ends identical, nothing placed before the kill is rewritten, nothing remembered as verified is read again', async () => {
    // Big enough that the kill lands while files are still to be placed (the poll below is as close as it can be).
    const big = await demo(fx.fresh('big'), 1536 * 1024);
    const bigPack = fx.fresh('big-pack');
    expect((await packIn(big, bigPack, { volumeSize: 2 * 1024 * 1024 })).code).toBe(0);
    const files = (JSON.parse(await readFile(join(bigPack, 'depot-pack.json'), 'utf8')) as PackManifest).files;
    const out = fx.fresh('killed');
    const state = join(out, '.depotkit', 'verified.json');
    const child = spawnCli(['depot', 'unpack', bigPack, '--out', out, '--json'], { output: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    // Kill as soon as the first file is remembered as verified.
    const oneVerified = async () => existsSync(state) && Object.keys(JSON.parse(await readFile(state, 'utf8').catch(() => '{}')) as object).length > 0;
    await until(oneVerified, 'a first file remembered as verified', { timeoutMs: 60_000, everyMs: 2, failIf: ended(child) });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const remembered = Object.keys(JSON.parse(await readFile(state, 'utf8')) as object).map((p) => p.slice(out.length + 1));
    // Files at their final path: the remembered ones, and any renamed in the moment before the state was saved.
    const placed = files.map((f) => f.path).filter((p) => existsSync(join(out, p)));
    expect(remembered.length).toBeGreaterThan(0);
    expect(placed.length).toBeLessThan(files.length);
    for (const p of remembered) expect(placed).toContain(p);
    const before = await identities(out, placed);

    const resumed = await unpack([bigPack], out);
    expect(resumed.code).toBe(0);
    expect(resumed.report.alreadyInPlace.map((p) => p.path).sort()).toEqual([...placed].sort());
    expect(resumed.report.placed).toHaveLength(files.length - placed.length);
    // Only a file placed but not yet remembered is read (once, to recognise it); the remembered ones are not.
    const unremembered = placed.filter((p) => !remembered.includes(p));
    expect(resumed.report.bytesHashedInPlace).toBe(files.filter((f) => unremembered.includes(f.path)).reduce((s, f) => s + f.size, 0));
    expect(await identities(out, placed)).toEqual(before);
    expect(await treeOf(out)).toEqual(await treeOf(big));
    expect(await tempsUnder(join(out, 'PROD'))).toEqual([]);
  });

  it('a delta unpacked onto the old depot gives the new one; what the new catalog drops is left for prune', async () => {
    const next = await nextRelease(fx.depot, fx.fresh('next'), BINARY);
    const delta = fx.fresh('delta');
    expect((await packIn(next.dir, delta, { since: fx.depot })).code).toBe(0);
    // Not onto an empty folder: a delta alone is not a depot.
    const empty = fx.fresh('empty');
    const alone = await unpack([delta], empty);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/is a delta made against a depot whose catalog is not the one in .* \(no catalog\)/);
    expect(existsSync(empty)).toBe(false);
    const site = fx.fresh('site');
    expect((await unpack([packDir], site)).code).toBe(0);
    const unchanged = Object.keys(await treeOf(site)).filter((p) => p !== next.dropped && !p.startsWith('PROD/metadata') && !p.startsWith('PROD/vsan'));
    const before = await identities(site, unchanged);

    const { code, report } = await unpack([delta], site);
    expect(code).toBe(0);
    expect(report.delta).toBe(true);
    expect(report.metadata).toBe('placed');
    expect(report.stale).toEqual([next.dropped]);
    expect(report.releases.map((r) => [r.version, r.complete])).toEqual([
      ['9.0.0.0', true],
      ['9.0.1.0', true],
    ]);
    expect(await identities(site, unchanged)).toEqual(before);
    const expected = await treeOf(next.dir);
    expect(await treeOf(site)).toEqual({ ...expected, [next.dropped]: (await treeOf(fx.depot))[next.dropped] });

    expect((await pruneDepot(site)).candidates.map((c) => c.path)).toEqual([next.dropped]);
    expect(existsSync(join(site, next.dropped))).toBe(true);
    await pruneDepot(site, { yes: true });
    expect(await treeOf(site)).toEqual(expected);
  });

  it('a component folder whose every file was on a missing volume is advised from the media, as its binaries are, not from a build', async () => {
    const dir = await media();
    const folderOf = (path: string) => path.split('/').slice(0, 3).join('/');
    // A component of one file, all of it in one volume that holds no metadata: its folder is missing as a whole.
    const whole = manifest.files.find(
      (f) =>
        f.path.startsWith(`${DEPOT_PATHS.comp}/`) &&
        f.pieces.length === 1 &&
        f.pieces[0]!.volume > 1 &&
        manifest.files.filter((g) => folderOf(g.path) === folderOf(f.path)).length === 1,
    )!;
    const volume = manifest.volumes[whole.pieces[0]!.volume - 1]!;
    await rm(join(dir, volume.name));
    const component = folderOf(whole.path);
    const { code, report } = await unpack([dir], fx.fresh('out'));
    expect(code).toBe(1);
    const human = unpackText(report);
    const line = human.split('\n').findIndex((l) => l.includes('layout.component.missing') && l.includes(component.split('/')[2]!));
    expect(line, human).toBeGreaterThanOrEqual(0);
    expect(
      human
        .split('\n')
        .slice(line, line + 3)
        .join('\n'),
    ).toContain('It is on the media: supply the volume named above');
    expect(human).not.toMatch(/depot build/);
    // The report says it too, for a script.
    const folder = report.verify.findings.find((f) => f.id === 'layout.component.missing');
    expect(folder).toMatchObject({ path: component, fix: expect.stringContaining('It is on the media') });
  });

  it("a delta with a volume missing keeps the old depot's metadata (and so a consistent depot) until it is whole", async () => {
    const next = await nextRelease(fx.depot, fx.fresh('next'), BINARY);
    const delta = fx.fresh('delta');
    expect((await packIn(next.dir, delta, { since: fx.depot })).code).toBe(0);
    const deltaManifest = JSON.parse(await readFile(join(delta, 'depot-pack.json'), 'utf8')) as PackManifest;
    const last = deltaManifest.volumes.at(-1)!;
    const aside = fx.fresh('aside');
    await rename(join(delta, last.name), aside);
    const site = fx.fresh('site');
    expect((await unpack([packDir], site)).code).toBe(0);
    const oldCatalog = await readFile(join(site, DEPOT_PATHS.catalog));

    const partial = await unpack([delta], site);
    expect(partial.code).toBe(1);
    expect(partial.report.metadata).toBe('held');
    expect(await readFile(join(site, DEPOT_PATHS.catalog))).toEqual(oldCatalog);
    expect(partial.report.verify.ok).toBe(true);

    await rename(aside, join(delta, last.name));
    const done = await unpack([delta], site);
    expect(done.code).toBe(0);
    expect(done.report.metadata).toBe('placed');
    expect(await readFile(join(site, DEPOT_PATHS.catalog))).toEqual(await readFile(join(next.dir, DEPOT_PATHS.catalog)));
  });

  it('does not replace different files of an unrelated depot without --force (exit 2, nothing written)', async () => {
    const other = await demo(fx.fresh('other'), BINARY + 1);
    const before = await treeOf(other);
    const refused = await unpack([packDir], other);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/already holds different files.*\n.*--force/);
    expect(await treeOf(other)).toEqual(before);
    const forced = await unpack([packDir], other, { force: true });
    expect(forced.code).toBe(0);
    const tree = await treeOf(other);
    for (const [path, hash] of Object.entries(await treeOf(fx.depot))) expect(tree[path]).toBe(hash);
  });

  it('refuses a manifest that SHA256SUMS does not vouch for (exit 1), and one that would write outside PROD/ (exit 2)', async () => {
    const damaged = await media();
    const text = await readFile(join(damaged, 'depot-pack.json'), 'utf8');
    await writeFile(join(damaged, 'depot-pack.json'), text.replace('"volumeSize": 262144', '"volumeSize": 262145'));
    const res = await unpack([damaged], fx.fresh('out'));
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/does not match its SHA-256 in SHA256SUMS: the manifest is damaged/);

    const hostile = await media();
    await rm(join(hostile, 'SHA256SUMS'));
    const m = JSON.parse(text) as PackManifest;
    m.files[0]!.path = 'PROD/../../escaped.json';
    await writeFile(join(hostile, 'depot-pack.json'), JSON.stringify(m));
    const out = fx.fresh('out');
    const refused = await unpack([hostile], out);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/not a plain path under PROD\//);
    expect(existsSync(join(fx.base, 'escaped.json'))).toBe(false);
  });
});

describe('depot unpack on the command line', () => {
  it('prints the report with --json, the human lines and exit 1 for a missing volume, and exit 2 with one sentence and its fix for a depot it may not replace', async () => {
    const out = fx.fresh('cli');
    const json = await runCli(['depot', 'unpack', packDir, '--out', out, '--json']);
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as UnpackReport).placed).toHaveLength(manifest.files.length);

    const dir = await media();
    const volume = manifest.volumes[2]!;
    await rm(join(dir, volume.name));
    const human = await runCli(['depot', 'unpack', dir, '--out', fx.fresh('human')]);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain(`ERROR volume ${volume.name} is missing from every folder given`);
    expect(human.stdout).toMatch(/^INCOMPLETE: fix the volumes named above/m);

    const other = await demo(fx.fresh('other'), BINARY + 1);
    const refused = await runCli(['depot', 'unpack', packDir, '--out', other]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^depotkit: .*already holds different files.*\n.*--force/);
    expect(refused.stderr).not.toMatch(/\n\s+at /);
  });
});
