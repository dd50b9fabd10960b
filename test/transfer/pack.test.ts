import { execFileSync } from 'node:child_process';
import { mkdir, readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import type { PackManifest } from '../../src/transfer/format.js';
import type { PackReport } from '../../src/transfer/pack.js';
import { runCli } from '../helpers/cli.js';
import { demo, demoFixture, flipByte, nextRelease, sha256, treeOf } from './helpers.js';
import { packIn, packText } from './in-process.js';

const BINARY = 200 * 1024;

const fx = demoFixture('depotkit-pack-', BINARY);

const manifestOf = async (out: string) => JSON.parse(await readFile(join(out, 'depot-pack.json'), 'utf8')) as PackManifest;

describe('depot pack', () => {
  it('writes volumes no larger than --volume-size that sha256sum -c, tar and cat alone turn back into the depot', async () => {
    const out = fx.fresh('pack');
    // The command line once, for its --json report; the rest of the file calls the library.
    const res = await runCli(['depot', 'pack', fx.depot, '--out', out, '--volume-size', '256K', '--json']);
    expect(res.code).toBe(0);
    const report = JSON.parse(res.stdout) as PackReport;
    expect(report.ok).toBe(true);
    expect(report.volumes.length).toBeGreaterThan(10);
    for (const v of report.volumes) {
      const size = (await stat(join(out, v.name))).size;
      expect(size).toBe(v.size);
      expect(size).toBeLessThanOrEqual(256 * 1024);
    }
    // Plain tools on any machine: the checksums, then tar and cat.
    const check = execFileSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: out, encoding: 'utf8' });
    expect(check.trim().split('\n')).toHaveLength(report.volumes.length + 3);
    expect(check).not.toMatch(/FAILED/);
    const manifest = await manifestOf(out);
    const split = manifest.files.filter((f) => f.pieces.length > 1);
    expect(split.length).toBeGreaterThan(0);
    const first = execFileSync('tar', ['-tf', join(out, report.volumes[0]!.name)], { encoding: 'utf8' });
    expect(first.split('\n')[0]).toBe(DEPOT_PATHS.catalog);
    const x = join(out, 'x');
    await mkdir(x);
    for (const v of report.volumes) execFileSync('tar', ['-xf', join(out, v.name), '-C', x]);
    execFileSync('sh', ['-c', `find . -name '*.part-0001' | while read -r p; do f=\${p%.part-0001}; cat "$f".part-* > "$f" && rm "$f".part-*; done`], {
      cwd: x,
    });
    expect(execFileSync('sha256sum', ['-c', join(out, 'depot-files.sha256')], { cwd: x, encoding: 'utf8' })).not.toMatch(/FAILED/);
    expect(await treeOf(x)).toEqual(await treeOf(fx.depot));
  });

  it('never overwrites an earlier pack without --force; with it, the earlier volumes go', async () => {
    const out = fx.fresh('again');
    expect((await packIn(fx.depot, out)).code).toBe(0);
    const before = await readdir(out);
    const again = await packIn(fx.depot, out, { volumeSize: 1024 * 1024 });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already holds a pack.*\n.*--force/);
    expect(await readdir(out)).toEqual(before);
    const forced = await packIn(fx.depot, out, { volumeSize: 1024 * 1024, force: true });
    expect(forced.code).toBe(0);
    const names = (await readdir(out)).filter((f) => f.endsWith('.tar'));
    expect(names.sort()).toEqual(forced.report.volumes.map((v) => v.name).sort());
    expect(names.length).toBeLessThan(before.filter((f) => f.endsWith('.tar')).length);
  });

  it('refuses bad input in one sentence (exit 2): a volume too small, an --out inside the depot, a folder that is no depot', async () => {
    const small = await runCli(['depot', 'pack', fx.depot, '--out', fx.fresh('small'), '--volume-size', '4K']);
    expect(small.code).toBe(2);
    expect(small.stderr).toMatch(/--volume-size must be at least 65536 bytes/);
    // The command line parses the size; the library refuses the folders, in the sentence the command prints.
    const inside = await packIn(fx.depot, join(fx.depot, 'PROD', 'pack'));
    expect(inside.code).toBe(2);
    expect(inside.stderr).toMatch(/inside the depot's PROD\/ folder/);
    const none = await packIn(fx.base, fx.fresh('none'));
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/has no PROD\/ folder/);
    for (const r of [small, inside, none]) expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("--since packs only what the older depot (or its pack) lacks or has different: the next release's delta", async () => {
    const next = await nextRelease(fx.depot, fx.fresh('next'), BINARY);
    const oldPack = fx.fresh('old-pack');
    expect((await packIn(fx.depot, oldPack)).code).toBe(0);
    for (const since of [fx.depot, join(oldPack, 'depot-pack.json')]) {
      const out = fx.fresh('delta');
      const { code, report } = await packIn(next.dir, out, { since });
      expect(code).toBe(0);
      expect(report.delta).toBe(true);
      const manifest = await manifestOf(out);
      const carried = manifest.files.map((f) => f.path).sort();
      expect(carried).toEqual([...next.added, DEPOT_PATHS.manifest, DEPOT_PATHS.catalog, DEPOT_PATHS.hclAll].sort());
      expect(report.removed).toEqual([next.dropped]);
      expect(manifest.since).toMatchObject({ catalogSha256: sha256(await readFile(join(fx.depot, DEPOT_PATHS.catalog))) });
      // The tree is the whole new depot, carried or not: a later --since starts from it.
      expect(manifest.tree.map((t) => t.path).sort()).toEqual(Object.keys(await treeOf(next.dir)).sort());
      expect(execFileSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: out, encoding: 'utf8' })).not.toMatch(/FAILED/);
    }
  });

  it("a binary whose content is not the catalog's is carried flagged, and the pack exits 1", async () => {
    const broken = fx.fresh('broken');
    await demo(broken, BINARY);
    const victim = `${DEPOT_PATHS.comp}/VCENTER/${(await readdir(join(broken, DEPOT_PATHS.comp, 'VCENTER'))).find((f) => f.endsWith('.iso'))!}`;
    await flipByte(join(broken, victim), 1000);
    const out = fx.fresh('broken-pack');
    const { code, report } = await packIn(broken, out);
    expect(code).toBe(1);
    expect(report.wrongChecksum.map((w) => w.path)).toEqual([victim]);
    const manifest = await manifestOf(out);
    expect(manifest.files.find((f) => f.path === victim)?.catalogMismatch).toBe(true);
    expect(manifest.tree.some((t) => t.path === victim)).toBe(false);
    const human = packText(report);
    expect(human).toMatch(/Wrong content \(packed, flagged: unpack will not place them\): 1\n\s+PROD\/COMP\/VCENTER\//);
    expect(human).toMatch(/^INCOMPLETE/m);
  });
});
