import { createHash } from 'node:crypto';
import { cp, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import yazl from 'yazl';
import { DEPOT_PATHS } from '../../src/constants.js';
import { catalogBinaries, parseCatalog, type CatalogBinary } from '../../src/depot/catalog.js';
import { makeDemoDepot } from '../../src/depot/demo.js';

export const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

export async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() || entry.isSymbolicLink()) out.push(relative(dir, join(entry.parentPath, entry.name)));
  }
  return out.sort();
}

export async function readCatalogBinaries(root: string): Promise<CatalogBinary[]> {
  return catalogBinaries(parseCatalog(await readFile(join(root, DEPOT_PATHS.catalog), 'utf8')));
}

/**
 * A vendor-like source: a demo depot split into a metadata-only folder (as the
 * vendor's archive holds) and a flat folder of downloaded binaries.
 */
export async function vendorLikeSource(base: string, binarySize = 4096) {
  const depot = join(base, 'source-depot');
  await makeDemoDepot(depot, { binarySize });
  const metadataDir = join(base, 'metadata');
  const binariesDir = join(base, 'downloads');
  const binaries = await readCatalogBinaries(depot);
  const binaryPaths = new Set(binaries.map((b) => b.path));
  for (const file of await listFiles(depot)) {
    if (binaryPaths.has(file)) continue;
    await mkdir(dirname(join(metadataDir, file)), { recursive: true });
    await cp(join(depot, file), join(metadataDir, file));
  }
  // Downloads land in nested folders: the build searches recursively.
  for (const [i, b] of binaries.entries()) {
    const target = join(binariesDir, i % 2 ? 'nested/deeper' : '', b.fileName);
    await mkdir(dirname(target), { recursive: true });
    await cp(join(depot, b.path), target);
  }
  return { depot, metadataDir, binariesDir, binaries };
}

/** Zips a folder as the vendor's archive does (optionally under a wrapper folder). */
export async function zipFolder(dir: string, zipPath: string, wrapper = ''): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const file of await listFiles(dir)) zip.addFile(join(dir, file), wrapper ? `${wrapper}/${file}` : file);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  await writeFile(zipPath, Buffer.concat(chunks));
}
