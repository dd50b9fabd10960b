import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { cp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { DEPOT_PATHS } from '../../src/constants.js';
import { catalogBinaries, parseCatalog, type CatalogBinary } from '../../src/depot/catalog.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { upgradeMetadataPaths } from '../../src/depot/upgrade-metadata.js';

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

/**
 * vCenter upgrade metadata under `root` as the vendor's archive carries it (the catalog does not name it): an
 * upgrade_info.xml, its binary signature and its SHA-256 file per upgrade. Returns the paths written, sorted.
 */
export async function writeUpgradeMetadata(root: string, uuids: string[]): Promise<string[]> {
  const paths: string[] = [];
  for (const uuid of uuids) {
    const [xml, sig, sha] = upgradeMetadataPaths(uuid) as [string, string, string];
    const xmlText = `<?xml version="1.0" encoding="UTF-8"?>\n<upgradeInfo id="${uuid}"><source>8.0.3</source><target>9.0.0.0</target></upgradeInfo>\n`;
    await mkdir(join(root, dirname(xml)), { recursive: true });
    await writeFile(join(root, xml), xmlText);
    // A signature is binary: bytes that are not UTF-8 must survive unchanged.
    await writeFile(join(root, sig), Buffer.concat([Buffer.from([0xff, 0x00, 0xfe, 0x80]), randomBytes(252)]));
    await writeFile(join(root, sha), `${sha256(xmlText)}\n`);
    paths.push(xml, sig, sha);
  }
  return paths.sort();
}

/** The wrapper folder the vendor's metadata archive is zipped under in these tests. */
export const ARCHIVE_WRAPPER = 'vcf-9.0.0.0-offline-depot-metadata';

/**
 * A metadata folder laid out like the vendor's archive: besides what the
 * installer reads, the copies under PROD/metadata/ (Compatibility v1 and v2,
 * vsan/hcl), vCenter upgrade metadata under PROD/COMP/VCENTER/vmw/<uuid>/,
 * and a file outside PROD/. Without `compatibility`, every Compatibility file
 * is left out.
 */
export async function vendorArchiveSource(base: string, options: { compatibility?: boolean } = {}) {
  const src = await vendorLikeSource(base);
  const meta = src.metadataDir;
  const put = async (path: string, data: Buffer | string) => {
    await mkdir(dirname(join(meta, path)), { recursive: true });
    await writeFile(join(meta, path), data);
  };
  const compatibilityName = basename(DEPOT_PATHS.compatibility);
  if (options.compatibility ?? true) {
    const data = await readFile(join(meta, DEPOT_PATHS.compatibility), 'utf8');
    const [v1, v2] = DEPOT_PATHS.metadataCompatibilityDirs;
    await put(`${v1}/${compatibilityName}`, data);
    // v2 differs from v1, so a mix-up between the two would show.
    await put(`${v2}/${compatibilityName}`, JSON.stringify({ schemaVersion: 2, ...JSON.parse(data) }));
  } else {
    await rm(join(meta, DEPOT_PATHS.compatibility));
  }
  for (const file of [DEPOT_PATHS.hclAll, DEPOT_PATHS.hclLastUpdated])
    await put(`${DEPOT_PATHS.metadataHclDir}/${basename(file)}`, await readFile(join(meta, file)));
  const upgrades = await writeUpgradeMetadata(meta, [randomUUID(), randomUUID()]);
  await writeFile(join(meta, 'README.txt'), 'outside PROD/: not part of the depot');
  return { ...src, upgrades };
}

/** Every file entry of a zip, by name, read back with the same library a user's archive is read with. */
export async function readZipEntries(zipPath: string): Promise<Map<string, Buffer>> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => yauzl.open(zipPath, { lazyEntries: true }, (err, z) => (err ? reject(err) : resolve(z))));
  const entries = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', () => resolve());
    zip.on('entry', (entry: yauzl.Entry) => {
      if (entry.fileName.endsWith('/')) return zip.readEntry();
      zip.openReadStream(entry, (err, stream) => {
        if (err) return reject(err);
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('error', reject);
        stream.on('end', () => {
          entries.set(entry.fileName, Buffer.concat(chunks));
          zip.readEntry();
        });
      });
    });
    zip.readEntry();
  });
  return entries;
}
