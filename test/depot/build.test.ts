import { execFileSync } from 'node:child_process';
import { appendFile, chmod, cp, lstat, mkdir, readFile, rename, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEPOT_PATHS, TEMP_PREFIX } from '../../src/constants.js';
import { buildDepot } from '../../src/depot/build.js';
import { verifyDepot } from '../../src/depot/verify.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { outcome } from '../transfer/in-process.js';
import { listFiles, sha256, vendorLikeSource, zipFolder } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

/** The vendor-like source, made once per file (a demo depot's writes are durable, so slow) and copied per test. */
let pristine: Awaited<ReturnType<typeof vendorLikeSource>> & { base: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  const t = await tempDir();
  pristine = { ...(await vendorLikeSource(t.dir)), base: t.dir, cleanup: t.cleanup };
});
afterAll(() => pristine?.cleanup());

/** A copy of the source in this test's folder, laid out as vendorLikeSource(dir) lays it out: each test changes its own. */
async function source(): Promise<Awaited<ReturnType<typeof vendorLikeSource>>> {
  await cp(pristine.base, dir, { recursive: true });
  const at = (p: string) => join(dir, relative(pristine.base, p));
  return {
    depot: at(pristine.depot),
    metadataDir: at(pristine.metadataDir),
    binariesDir: at(pristine.binariesDir),
    binaries: structuredClone(pristine.binaries),
  };
}

describe('depot build', () => {
  it('lays out a real zip byte for byte and places every binary, then verifies clean', async () => {
    const src = await source();
    const zip = join(dir, 'vcf-9.0.0-offline-depot-metadata.zip');
    await zipFolder(src.metadataDir, zip);
    const out = join(dir, 'out');
    const report = await buildDepot({ metadata: zip, binaries: [src.binariesDir], out });
    expect(report.ok).toBe(true);
    expect(report.placed.length).toBe(src.binaries.length);
    expect(report.missing.length + report.wrongSize.length + report.wrongChecksum.length).toBe(0);
    for (const meta of [DEPOT_PATHS.catalog, DEPOT_PATHS.catalogSig, DEPOT_PATHS.hclAll, DEPOT_PATHS.compatibility]) {
      expect((await readFile(join(out, meta))).equals(await readFile(join(src.metadataDir, meta)))).toBe(true);
    }
    expect((await verifyDepot(out, { deep: true })).ok).toBe(true);
  });

  it('accepts a zip whose PROD/ sits under a wrapper folder, and an extracted folder', async () => {
    const src = await source();
    const zip = join(dir, 'wrapped.zip');
    await zipFolder(src.metadataDir, zip, 'vcf-9.0-metadata');
    expect((await buildDepot({ metadata: zip, binaries: [src.binariesDir], out: join(dir, 'a') })).ok).toBe(true);
    expect((await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out: join(dir, 'b') })).ok).toBe(true);
    expect((await buildDepot({ metadata: join(src.metadataDir, 'PROD'), binaries: [src.binariesDir], out: join(dir, 'c') })).ok).toBe(true);
  });

  it('reports missing, wrong size, wrong checksum (never placed) and files not in the catalog', async () => {
    const src = await source();
    const [missing, short, corrupt] = src.binaries;
    const find = (name: string) =>
      listFiles(src.binariesDir).then((files) =>
        join(
          src.binariesDir,
          files.find((f) => f.endsWith(name))!,
        ),
      );
    await rm(await find(missing!.fileName));
    await truncate(await find(short!.fileName), 100);
    const corruptPath = await find(corrupt!.fileName);
    const data = await readFile(corruptPath);
    data[0] = data[0]! ^ 0xff;
    await writeFile(corruptPath, data);
    await writeFile(join(src.binariesDir, 'notes.txt'), 'not a binary');

    const out = join(dir, 'out');
    const report = await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out });
    expect(report.ok).toBe(false);
    expect(report.missing.map((e) => e.path)).toEqual([missing!.path]);
    expect(report.wrongSize.map((e) => [e.path, e.actualSize])).toEqual([[short!.path, 100]]);
    expect(report.wrongChecksum.map((e) => e.path)).toEqual([corrupt!.path]);
    expect(report.wrongChecksum[0]!.actualSha256).toBe(sha256(data));
    expect(report.notInCatalog).toEqual([join(src.binariesDir, 'notes.txt')]);
    expect(report.placed.length).toBe(src.binaries.length - 3);
    for (const bad of [missing!, short!, corrupt!]) await expect(stat(join(out, bad.path))).rejects.toThrow();
    expect((await listFiles(out)).filter((f) => f.includes(TEMP_PREFIX))).toEqual([]);

    const cli = await runCli(['depot', 'build', '--metadata', src.metadataDir, '--binaries', src.binariesDir, '--out', out, '--json']);
    expect(cli.code).toBe(1);
    const json = JSON.parse(cli.stdout);
    expect(json.alreadyInPlace.length).toBe(src.binaries.length - 3);
    expect(json.wrongChecksum.length).toBe(1);
  });

  it('re-runs skip correct files without reading them, and replace a stale partial temp file', async () => {
    const src = await source();
    const out = join(dir, 'out');
    await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out });
    // An interrupted run leaves only a temporary file; the next run removes it.
    const leftover = join(out, 'PROD/COMP/VCENTER', `${TEMP_PREFIX}abc-VMware-VCSA-all.iso`);
    await writeFile(leftover, 'partial');
    let bytesRead = 0;
    const again = await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out, onBytes: (n) => (bytesRead += n) });
    expect(bytesRead).toBe(0); // nothing was read again: the verified state vouched for every file
    expect(again.placed.length).toBe(0);
    expect(again.alreadyInPlace.length).toBe(src.binaries.length);
    expect(again.metadata.written.length).toBe(0);
    await expect(stat(leftover)).rejects.toThrow();
    const state = JSON.parse(await readFile(join(out, '.depotkit/verified.json'), 'utf8'));
    expect(Object.keys(state).length).toBe(src.binaries.length);
  });

  it('a changed file at a final path is a conflict without --force and is replaced with it', async () => {
    const src = await source();
    const out = join(dir, 'out');
    await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out });
    const target = join(out, src.binaries[0]!.path);
    await appendFile(target, 'x');
    const conflict = await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out });
    expect(conflict.conflicts.map((c) => c.path)).toEqual([src.binaries[0]!.path]);
    expect((await stat(target)).size).toBe(src.binaries[0]!.size + 1);
    const forced = await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out, force: true });
    expect(forced.ok).toBe(true);
    expect(sha256(await readFile(target))).toBe(src.binaries[0]!.checksum);
  });

  it('hardlink and symlink modes link instead of copying', async () => {
    const src = await source();
    const hard = await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out: join(dir, 'hard'), mode: 'hardlink' });
    expect(hard.ok).toBe(true);
    expect(hard.contentChecked).toBe(false);
    const b = src.binaries[0]!;
    expect((await stat(join(dir, 'hard', b.path))).nlink).toBe(2);
    const rerun = await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out: join(dir, 'hard'), mode: 'hardlink' });
    expect(rerun.alreadyInPlace.length).toBe(src.binaries.length);

    const sym = await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out: join(dir, 'sym'), mode: 'symlink', checksumLinks: true });
    expect(sym.ok).toBe(true);
    expect((await lstat(join(dir, 'sym', b.path))).isSymbolicLink()).toBe(true);
    expect((await verifyDepot(join(dir, 'sym'), { deep: true })).ok).toBe(true);
  });

  it('refuses different metadata in an existing output without --force, and changes nothing', async () => {
    const src = await source();
    const out = join(dir, 'out');
    await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out });
    const manifest = join(src.metadataDir, DEPOT_PATHS.manifest);
    await writeFile(manifest, '{"releases": []}\n');
    const before = await readFile(join(out, DEPOT_PATHS.manifest));
    const refused = await outcome(buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out }));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('already holds different metadata');
    expect(refused.stderr).toContain(DEPOT_PATHS.manifest);
    expect((await readFile(join(out, DEPOT_PATHS.manifest))).equals(before)).toBe(true);
    expect((await outcome(buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out, force: true }))).code).toBe(0);
    expect(await readFile(join(out, DEPOT_PATHS.manifest), 'utf8')).toBe('{"releases": []}\n');
  });

  it('bad input: missing zip, corrupt zip, catalog not JSON, catalog off the schema, bad --binaries', async () => {
    const src = await source();
    const out = join(dir, 'out');
    const run = (metadata: string, binaries = src.binariesDir) => outcome(buildDepot({ metadata, binaries: [binaries], out }));

    // The command line for the first: one sentence, exit 2, no stack trace; the library for the rest.
    const missing = await runCli(['depot', 'build', '--metadata', join(dir, 'nope.zip'), '--binaries', src.binariesDir, '--out', out]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`${join(dir, 'nope.zip')} does not exist`);

    const corrupt = join(dir, 'corrupt.zip');
    await writeFile(corrupt, 'PK\u0003\u0004 this is not really a zip');
    const c = await run(corrupt);
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('is not a readable zip archive');

    const catalog = join(src.metadataDir, DEPOT_PATHS.catalog);
    const good = await readFile(catalog, 'utf8');
    await writeFile(catalog, good.slice(0, 50));
    const notJson = await run(src.metadataDir);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/productVersionCatalog\.json is not valid JSON/);

    const parsed = JSON.parse(good);
    const first = Object.keys(parsed.patches)[0]!;
    parsed.patches[first][0].artifacts.bundles[0].binaries[0].checksum = 'abc';
    await writeFile(catalog, JSON.stringify(parsed));
    const schema = await run(src.metadataDir);
    expect(schema.code).toBe(2);
    expect(schema.stderr).toContain("does not have the catalog's shape");
    expect(schema.stderr).toContain('checksum');
    await writeFile(catalog, good);

    const badBinaries = await run(src.metadataDir, join(dir, 'no-such-folder'));
    expect(badBinaries.code).toBe(2);
    expect(badBinaries.stderr).toContain('is not a folder');
    expect(missing.stderr).not.toMatch(/\n\s+at /);
    await expect(stat(join(out, 'PROD/COMP'))).rejects.toThrow();
  });

  it('a full disk fails with one sentence and leaves no partial file at a final path', async (ctx) => {
    const src = await vendorLikeSource(dir, 256 * 1024);
    const small = join(dir, 'small-disk');
    await mkdir(small);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', small], { stdio: 'ignore' });
    } catch {
      ctx.skip(); // needs root and mount rights; CI has them
      return;
    }
    try {
      const cli = await runCli(['depot', 'build', '--metadata', src.metadataDir, '--binaries', src.binariesDir, '--out', small]);
      // The environment's failure, not a finding about the depot nor bad input.
      expect(cli.code).toBe(3);
      // The space check before writing now refuses this build; a disk filled by another writer mid-build still ends with ENOSPC's sentence.
      expect(cli.stderr).toMatch(/No space left on the device|nothing was written/);
      const files = await listFiles(small);
      expect(files.filter((f) => f.includes(TEMP_PREFIX))).toEqual([]);
      for (const b of src.binaries) {
        const info = await stat(join(small, b.path)).catch(() => undefined);
        if (info) expect(info.size).toBe(b.size); // whole, or not there at all
      }
    } finally {
      execFileSync('umount', [small]);
    }
  });

  it('refuses a catalog whose component name would leave PROD/COMP, and writes nothing outside --out', async () => {
    const src = await source();
    const catalogPath = join(src.metadataDir, DEPOT_PATHS.catalog);
    const catalog = JSON.parse(await readFile(catalogPath, 'utf8'));
    catalog.patches['../../../escaped'] = catalog.patches.VCENTER;
    await writeFile(catalogPath, JSON.stringify(catalog));
    const cli = await outcome(buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out: join(dir, 'out') }));
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain("does not have the catalog's shape");
    expect(cli.stderr).toContain('property name');
    await expect(stat(join(dir, 'escaped'))).rejects.toThrow();
  });

  it('--force keeps the old file when the new candidate has the wrong checksum', async () => {
    const src = await source();
    const out = join(dir, 'out');
    await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out });
    const b = src.binaries[0]!;
    const target = join(out, b.path);
    await appendFile(target, 'x'); // a changed file in place...
    const candidate = join(
      src.binariesDir,
      (await listFiles(src.binariesDir)).find((f) => f.endsWith(b.fileName))!,
    );
    const data = await readFile(candidate);
    data[0] = data[0]! ^ 1; // ...and a wrong download of the same size
    await writeFile(candidate, data);
    const forced = await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out, force: true });
    expect(forced.wrongChecksum.map((e) => e.path)).toEqual([b.path]);
    expect((await stat(target)).size).toBe(b.size + 1); // the old file is still there, untouched
  });

  it('makes copies readable by the web server even when the download was private (0600)', async () => {
    const src = await source();
    for (const f of await listFiles(src.binariesDir)) await chmod(join(src.binariesDir, f), 0o600);
    const out = join(dir, 'out');
    await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out });
    expect((await stat(join(out, src.binaries[0]!.path))).mode & 0o777).toBe(0o644);
    // A private file placed by hand is reported: nginx or Apache running as another user gets 403.
    await chmod(join(out, src.binaries[1]!.path), 0o600);
    const result = await verifyDepot(out);
    expect(result.findings.filter((f) => f.id === 'file.not-world-readable').map((f) => f.path)).toEqual([src.binaries[1]!.path]);
  });

  it('does not take its own output for downloads when --out is inside a --binaries folder', async () => {
    const src = await source();
    const out = join(src.binariesDir, 'depot');
    await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out });
    const again = await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out, force: true });
    expect(again.ok).toBe(true);
    expect(again.notInCatalog).toEqual([]);
  });

  it('lays out only metadata from a source that holds more, and the served HCL and Compatibility copies', async () => {
    const src = await source();
    // A whole depot given as --metadata: its binaries are not metadata.
    const report = await buildDepot({ metadata: src.depot, binaries: [src.binariesDir], out: join(dir, 'a') });
    expect(report.metadata.ignored.sort()).toEqual(src.binaries.map((b) => b.path).sort());
    expect(report.metadata.written.some((p) => p.startsWith('PROD/COMP/') && !p.includes('/Compatibility/'))).toBe(false);
    expect(report.placed.length).toBe(src.binaries.length);

    // An archive whose HCL and Compatibility data sit only under PROD/metadata/.
    const meta = join(dir, 'meta-only');
    await cp(src.metadataDir, meta, { recursive: true });
    await mkdir(join(meta, DEPOT_PATHS.metadataHclDir), { recursive: true });
    await rename(join(meta, DEPOT_PATHS.hclAll), join(meta, DEPOT_PATHS.metadataHclDir, 'all.json'));
    await rename(join(meta, DEPOT_PATHS.hclLastUpdated), join(meta, DEPOT_PATHS.metadataHclDir, 'lastupdatedtime.json'));
    await mkdir(join(meta, DEPOT_PATHS.metadataCompatibilityDirs[0]), { recursive: true });
    await rename(join(meta, DEPOT_PATHS.compatibility), join(meta, DEPOT_PATHS.metadataCompatibilityDirs[0], 'VmwareCompatibilityData.json'));
    const b = await buildDepot({ metadata: meta, binaries: [src.binariesDir], out: join(dir, 'b') });
    expect(b.ok).toBe(true);
    expect((await verifyDepot(join(dir, 'b'))).ok).toBe(true);
  });
});
