import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEPOT_PATHS, DEPOT_ROOT_DIR, VCENTER_UPGRADE_METADATA_DIR } from '../../src/constants.js';
import { buildDepot } from '../../src/depot/build.js';
import { verifyDepot } from '../../src/depot/verify.js';
import type { Finding } from '../../src/util/findings.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { buildText, outcome, verifyText } from '../transfer/in-process.js';
import { ARCHIVE_WRAPPER, listFiles, readZipEntries, vendorArchiveSource, zipFolder } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

/** The PROD/ files of a zip made by zipFolder under ARCHIVE_WRAPPER, by web-root-relative path. */
async function prodEntries(zip: string): Promise<Map<string, Buffer>> {
  const prod = new Map<string, Buffer>();
  for (const [name, data] of await readZipEntries(zip)) {
    if (name.startsWith(`${ARCHIVE_WRAPPER}/${DEPOT_ROOT_DIR}/`)) prod.set(name.slice(ARCHIVE_WRAPPER.length + 1), data);
  }
  return prod;
}

const underUpgradeDir = (f: Finding) => f.path?.startsWith(VCENTER_UPGRADE_METADATA_DIR) ?? false;

describe("depot build with the vendor's whole metadata archive", () => {
  it('lays out every PROD/ file of the archive byte for byte, beside the binaries, and re-runs change nothing', async () => {
    const src = await vendorArchiveSource(dir);
    // The archive is downloaded with the binaries, as users do; it is not a stray download.
    const zip = join(src.binariesDir, `${ARCHIVE_WRAPPER}.zip`);
    await zipFolder(src.metadataDir, zip, ARCHIVE_WRAPPER);
    await writeFile(join(src.binariesDir, 'notes.txt'), 'a real stray');
    const prod = await prodEntries(zip);
    for (const path of [...src.upgrades, ...DEPOT_PATHS.metadataCompatibilityDirs.map((d) => `${d}/VmwareCompatibilityData.json`), DEPOT_PATHS.compatibility]) {
      expect(prod.has(path)).toBe(true);
    }

    const out = join(dir, 'out');
    const report = await buildDepot({ metadata: zip, binaries: [src.binariesDir], out });
    expect(report.ok).toBe(true);
    for (const [path, data] of prod) expect({ path, same: (await readFile(join(out, path))).equals(data) }).toEqual({ path, same: true });
    // Nothing else under PROD/ than the archive's files and the catalog's binaries; nothing from outside PROD/.
    const binaryPaths = src.binaries.map((b) => b.path);
    expect((await listFiles(join(out, DEPOT_ROOT_DIR))).map((f) => `${DEPOT_ROOT_DIR}/${f}`)).toEqual([...prod.keys(), ...binaryPaths].sort());
    await expect(stat(join(out, 'README.txt'))).rejects.toThrow();
    expect(report.metadata.written.sort()).toEqual([...prod.keys()].sort());
    expect(report.metadata.ignored).toEqual([]);
    expect(report.placed.map((e) => e.path).sort()).toEqual([...binaryPaths].sort());
    // Metadata under PROD/COMP is neither a missing binary nor a stray one.
    expect(report.missing).toEqual([]);
    expect(report.notInCatalog).toEqual([join(src.binariesDir, 'notes.txt')]);
    expect(report.verify.ok).toBe(true);
    expect(report.verify.findings.filter((f) => f.severity !== 'info')).toEqual([]);
    expect(report.verify.findings.filter(underUpgradeDir)).toEqual([]);

    const deep = await verifyDepot(out, { deep: true });
    expect(deep.ok).toBe(true);
    expect(deep.findings.filter((f) => f.severity !== 'info')).toEqual([]);
    expect(deep.findings.filter(underUpgradeDir)).toEqual([]);

    const again = await buildDepot({ metadata: zip, binaries: [src.binariesDir], out });
    expect(again.ok).toBe(true);
    expect(again.metadata.written).toEqual([]);
    expect(again.metadata.unchanged.length).toBe(prod.size);
    expect(again.placed).toEqual([]);
    expect(again.alreadyInPlace.length).toBe(src.binaries.length);
    for (const [path, data] of prod) expect((await readFile(join(out, path))).equals(data)).toBe(true);
  });

  it('through the CLI from the extracted archive inside the downloads folder: no stray files reported, exit 0', async () => {
    const src = await vendorArchiveSource(dir);
    const out = join(dir, 'out');
    // The extracted archive sits inside the only --binaries folder given.
    const metadata = join(src.binariesDir, ARCHIVE_WRAPPER);
    await rename(src.metadataDir, metadata);
    const result = await runCli(['depot', 'build', '--metadata', metadata, '--binaries', src.binariesDir, '--out', out, '--json']);
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json.ok).toBe(true);
    expect(json.notInCatalog).toEqual([]);
    expect(json.verify.ok).toBe(true);
    for (const path of src.upgrades) expect((await readFile(join(out, path))).equals(await readFile(join(metadata, path)))).toBe(true);
    expect(buildText(json)).toContain(`OK: ${out} is complete; depot verify's checks: 0 errors, 0 warnings.`);
  });

  it('fails (exit 1) with the finding depot verify gives when the archive lacks the Compatibility data', async () => {
    const src = await vendorArchiveSource(dir, { compatibility: false });
    const zip = join(dir, 'no-compatibility.zip');
    await zipFolder(src.metadataDir, zip, ARCHIVE_WRAPPER);
    const out = join(dir, 'out');
    const built = await outcome(buildDepot({ metadata: zip, binaries: [src.binariesDir], out }));
    expect(built.code).toBe(1);
    const report = built.report;
    expect(report.ok).toBe(false);
    // Every binary is there: only verify's checks fail.
    expect(report.placed.length).toBe(src.binaries.length);
    expect(report.missing).toEqual([]);
    expect(report.verify.ok).toBe(false);
    const missing = report.verify.findings.filter((f: Finding) => f.severity === 'error');
    expect(missing.map((f: Finding) => [f.id, f.path])).toEqual([['layout.file.missing', DEPOT_PATHS.compatibility]]);

    const verified = await verifyDepot(out);
    expect(verified.ok).toBe(false);
    expect(report.verify.findings).toEqual(verified.findings);

    const human = buildText(report);
    const errorLines = verifyText(verified)
      .split('\n')
      .filter((l) => l.startsWith('ERROR'));
    expect(errorLines.length).toBe(1);
    expect(errorLines[0]).toContain(DEPOT_PATHS.compatibility);
    expect(human.split('\n')).toContain(errorLines[0]);
    expect(human).toContain(`FAILED: ${out} has every binary but fails depot verify's checks: 1 error, 0 warnings`);
    expect(human).not.toContain('OK:');
  });

  it('refuses an archive entry that would leave PROD/ and writes nothing', async () => {
    const src = await vendorArchiveSource(dir);
    const zip = join(dir, 'slip.zip');
    const decoy = 'PROD/aa/bb/escaped.txt';
    const evil = 'PROD/../../escaped.txt';
    expect(decoy.length).toBe(evil.length);
    await mkdir(join(src.metadataDir, 'PROD/aa/bb'), { recursive: true });
    await writeFile(join(src.metadataDir, decoy), 'escaped');
    await zipFolder(src.metadataDir, zip);
    // zip libraries refuse to write such a name: put it in by hand, in the local and central headers alike.
    const bytes = await readFile(zip);
    await writeFile(zip, Buffer.from(bytes.toString('latin1').split(decoy).join(evil), 'latin1'));
    const out = join(dir, 'out');
    const result = await outcome(buildDepot({ metadata: zip, binaries: [src.binariesDir], out }));
    // Exit 2: a sentence of its own, not an error the CLI would print with its stack.
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(evil);
    await expect(stat(join(dir, 'escaped.txt'))).rejects.toThrow();
    await expect(stat(out)).rejects.toThrow();
  });
});
