import { link, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { readMetadata } from '../../src/depot/metadata.js';
import { METADATA_LIMITS } from '../../src/util/limits.js';
import { tempDir } from '../helpers/temp.js';
import { vendorLikeSource } from '../depot/helpers.js';
import { depotBuild, expectOneSentence, listTree, makeZip, patchCentralSizes, type ZipEntrySpec } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
let binariesDir: string;
let catalog: Buffer;
let metadataFiles: ZipEntrySpec[];
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  const src = await vendorLikeSource(dir, 256);
  binariesDir = src.binariesDir;
  catalog = await readFile(join(src.metadataDir, DEPOT_PATHS.catalog));
  metadataFiles = [];
  for (const path of [
    DEPOT_PATHS.catalog,
    DEPOT_PATHS.catalogSig,
    DEPOT_PATHS.manifest,
    DEPOT_PATHS.hclAll,
    DEPOT_PATHS.hclLastUpdated,
    DEPOT_PATHS.compatibility,
  ]) {
    metadataFiles.push({ name: path, data: await readFile(join(src.metadataDir, path)) });
  }
});
afterEach(() => cleanup());

/** Builds from `zip` into a fresh --out and returns what the user sees and what was written. */
async function build(zipBytes: Buffer) {
  const zip = join(dir, 'hostile.zip');
  await writeFile(zip, zipBytes);
  const out = join(dir, 'out');
  const r = await depotBuild({ metadata: zip, binaries: [binariesDir], out });
  return { ...r, written: await listTree(out) };
}

describe('depot build --metadata refuses a hostile zip before writing anything', () => {
  it('the real layout still builds (the caps are far above the vendor archive)', async () => {
    const r = await build(
      await makeZip([
        { name: 'vcf-9.0.0.0-offline-depot-metadata/', dir: true },
        ...metadataFiles.map((f) => ({ ...f, name: `vcf-9.0.0.0-offline-depot-metadata/${f.name}` })),
      ]),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.written).toContain(DEPOT_PATHS.catalog);
  });

  it('more entries than the cap: refused from the end record, no file written', async () => {
    const many: ZipEntrySpec[] = [...metadataFiles];
    for (let i = 0; many.length <= METADATA_LIMITS.maxEntries; i++) many.push({ name: `PROD/metadata/filler/${i}.json`, data: '{}', compress: false });
    const r = await build(await makeZip(many));
    expectOneSentence(
      r,
      2,
      new RegExp(`holds ${many.length} entries, more than the ${METADATA_LIMITS.maxEntries} depotkit reads: it is not the vendor's metadata archive\\.`),
    );
    expect(r.written).toEqual([]);
  });

  it('a zip bomb (one entry compressed 1000 to 1): refused from its central-directory record', async () => {
    // 4 MiB of zeros deflate about 1000 to 1, and are past the size below which the ratio is not held.
    const bomb = Buffer.alloc(4 * 1024 ** 2);
    const r = await build(await makeZip([...metadataFiles, { name: 'PROD/metadata/vsan/hcl/all.json', data: bomb }]));
    expectOneSentence(r, 2, /holds PROD\/metadata\/vsan\/hcl\/all\.json, compressed \d+ to 1 \(more than 200\): a zip bomb/);
    expect(r.written).toEqual([]);
  });

  it('many small entries that each pass the ratio but whose sum is a bomb: refused for the whole archive', async () => {
    const justUnder = Buffer.alloc(METADATA_LIMITS.ratioExemptBytes - 1);
    const entries = [...metadataFiles];
    for (let i = 0; i < 16; i++) entries.push({ name: `PROD/metadata/padding/${i}.json`, data: justUnder });
    const r = await build(await makeZip(entries));
    expectOneSentence(r, 2, /unpacks to 16\.\d MiB from \d+\.\d KiB \(more than 200 to 1\): a zip bomb/);
    expect(r.written).toEqual([]);
  });

  it('declared sizes over the total cap: refused before any data is decompressed', async () => {
    const zip = await makeZip([
      ...metadataFiles,
      { name: 'PROD/metadata/a.json', data: 'x'.repeat(100), compress: false },
      { name: 'PROD/metadata/b.json', data: 'y'.repeat(100), compress: false },
    ]);
    // Each entry claims 600 MB stored (ratio 1): no ratio check can see it, the total can.
    let patched = patchCentralSizes(zip, 'PROD/metadata/a.json', { compressed: 600_000_000, uncompressed: 600_000_000 });
    patched = patchCentralSizes(patched, 'PROD/metadata/b.json', { compressed: 600_000_000, uncompressed: 600_000_000 });
    const r = await build(patched);
    expectOneSentence(r, 2, /unpacks to more than 1\.0 GiB: it is not the vendor's metadata archive\./);
    expect(r.written).toEqual([]);
  });

  it('an entry name with NUL: refused, the byte escaped', async () => {
    const r = await build(await makeZip([...metadataFiles, { name: 'PROD/metadata/evil\x00.json', data: '{}' }]));
    expectOneSentence(r, 2, /holds an entry whose name has control characters \("PROD\/metadata\/evil\\x00\.json"\)/);
    expect(r.written).toEqual([]);
  });

  it('a file, then a folder of the same name: refused before the first file is written', async () => {
    const r = await build(
      await makeZip([...metadataFiles, { name: 'PROD/metadata/notes', data: 'a file' }, { name: 'PROD/metadata/notes/inner.txt', data: 'inside a file?' }]),
    );
    expectOneSentence(r, 2, /holds PROD\/metadata\/notes both as a file and as a folder \(PROD\/metadata\/notes\/inner\.txt\)/);
    expect(r.written).toEqual([]);
    const dirEntry = await build(
      await makeZip([...metadataFiles, { name: 'PROD/metadata/notes', data: 'a file' }, { name: 'PROD/metadata/notes', dir: true }]),
    );
    expectOneSentence(dirEntry, 2, /holds PROD\/metadata\/notes both as a file and as a folder \(PROD\/metadata\/notes\/\)/);
    expect(dirEntry.written).toEqual([]);
  });

  it('a metadata file inside the path of a catalog binary: refused (the binary could never be placed)', async () => {
    const first = (JSON.parse(catalog.toString()) as { patches: Record<string, { artifacts: { bundles: { binaries: { fileName: string }[] }[] } }[]> }).patches;
    const [component, versions] = Object.entries(first)[0]!;
    const binaryPath = `PROD/COMP/${component}/${versions[0]!.artifacts.bundles[0]!.binaries[0]!.fileName}`;
    const r = await build(await makeZip([...metadataFiles, { name: `${binaryPath}/upgrade_info.xml`, data: '<x/>' }]));
    expectOneSentence(r, 2, /both as a file and as a folder/);
    expect(r.written).toEqual([]);
  });

  it('the catalog twice (two different copies): refused, whichever would have won', async () => {
    const forged = Buffer.from(catalog.toString().replace(/"size": \d+/, '"size": 1'));
    const r = await build(await makeZip([...metadataFiles, { name: DEPOT_PATHS.catalog, data: forged }]));
    expectOneSentence(r, 2, new RegExp(`holds ${DEPOT_PATHS.catalog.replace(/\./g, '\\.')} twice: it is not the vendor's metadata archive\\.`));
    expect(r.written).toEqual([]);
    // The same file under two wrapper folders lands on one path: refused too.
    const wrapped = await build(
      await makeZip([...metadataFiles.map((f) => ({ ...f, name: `a/${f.name}` })), { name: `b/${DEPOT_PATHS.catalog}`, data: forged }]),
    );
    expectOneSentence(wrapped, 2, /twice \(as a\/PROD\/.* and b\/PROD\/.*\)/);
    expect(wrapped.written).toEqual([]);
  });

  it('a catalog naming one path twice with different checksums: refused', async () => {
    const parsed = JSON.parse(catalog.toString()) as {
      patches: Record<string, { artifacts: { bundles: { name: string; binaries: { checksum: string }[] }[] } }[]>;
    };
    const [, versions] = Object.entries(parsed.patches)[0]!;
    const bundle = versions[0]!.artifacts.bundles[0]!;
    bundle.binaries.push({ ...bundle.binaries[0]!, checksum: 'f'.repeat(64) });
    const r = await build(
      await makeZip([...metadataFiles.filter((f) => f.name !== DEPOT_PATHS.catalog), { name: DEPOT_PATHS.catalog, data: JSON.stringify(parsed) }]),
    );
    expectOneSentence(r, 2, /names PROD\/COMP\/.* twice with different checksums \(bundles .* and .*\): one path cannot hold both\./);
    expect(r.written).toEqual([]);
  });

  it('an extracted folder with too many files is refused before any is read', async () => {
    const folder = join(dir, 'extracted');
    await mkdir(join(folder, 'PROD', 'metadata', 'filler'), { recursive: true });
    for (const f of metadataFiles) {
      await mkdir(join(folder, f.name, '..'), { recursive: true });
      await writeFile(join(folder, f.name), f.data!);
    }
    // Names of one file (hard links): as many files to count, a third of the system calls to make them.
    const filler = join(folder, 'filler.json');
    await writeFile(filler, '{}');
    const names = Array.from({ length: METADATA_LIMITS.maxEntries }, (_, i) => join(folder, 'PROD', 'metadata', 'filler', `${i}.json`));
    for (let i = 0; i < names.length; i += 500) await Promise.all(names.slice(i, i + 500).map((n) => link(filler, n)));
    await expect(readMetadata(folder)).rejects.toThrow(
      new RegExp(`holds ${METADATA_LIMITS.maxEntries + metadataFiles.length} files under PROD/, more than the ${METADATA_LIMITS.maxEntries} depotkit reads`),
    );
  });
});
