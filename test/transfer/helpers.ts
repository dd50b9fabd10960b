import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { DEPOT_PATHS, DEPOT_STATE_DIR, UMDS_PATCH_STORE_DIR, componentDir } from '../../src/constants.js';
import type { Catalog } from '../../src/depot/catalog.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { makeEsxDemo } from '../../src/esx/demo.js';
import { afterAll, beforeAll } from 'vitest';
import { tempDir } from '../helpers/temp.js';

export const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/**
 * Every file under `root`, or under its folder `under`, with its SHA-256, by its path from `root`; the tools'
 * state folders aside. A missing folder throws, or gives no file with `missingIsEmpty`.
 */
export async function hashedTree(root: string, under = '', missingIsEmpty = false): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const dir = join(root, under);
  if (missingIsEmpty && !existsSync(dir)) return out;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = relative(root, join(entry.parentPath, entry.name));
    if (!path.split('/').includes(DEPOT_STATE_DIR)) out[path] = sha256(await readFile(join(root, path)));
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** Every file under PROD/ with its SHA-256. */
export const treeOf = (root: string) => hashedTree(root, 'PROD');

/** Inode and mtime of each file: unchanged ones were not rewritten. */
export async function identities(root: string, paths: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const p of paths) {
    const s = await stat(join(root, p));
    out[p] = `${s.ino}:${s.mtimeMs}`;
  }
  return out;
}

export async function demo(dir: string, binarySize: number): Promise<string> {
  await makeDemoDepot(dir, { binarySize });
  return dir;
}

export async function readCatalog(root: string): Promise<Catalog> {
  return JSON.parse(await readFile(join(root, DEPOT_PATHS.catalog), 'utf8')) as Catalog;
}

export interface NextRelease {
  dir: string;
  /** Binaries the next release adds (new versions of some components). */
  added: string[];
  /** A binary the next catalog no longer names. */
  dropped: string;
}

/**
 * The next release's depot, made from `base` as a connected site updates its
 * own: the new metadata (a catalog that names the older release's binaries
 * too, a manifest with both releases, a new HCL) plus the new binaries; one
 * old binary is no longer named and no longer there.
 */
export async function nextRelease(base: string, dir: string, binarySize: number): Promise<NextRelease> {
  await cp(base, dir, { recursive: true });
  const catalog = await readCatalog(dir);
  const added: string[] = [];
  for (const component of ['VCENTER', 'NSX_T_MANAGER']) {
    const fileName = `${component.toLowerCase()}-9.0.1.0.25000000.bin`;
    const data = randomBytes(binarySize);
    await writeFile(join(dir, componentDir(component), fileName), data);
    catalog.patches[component]!.push({
      productVersion: '9.0.1.0.25000000',
      artifacts: { bundles: [{ name: `bundle-${component}-9.0.1.0`, type: 'PATCH', binaries: [{ fileName, size: data.length, checksum: sha256(data) }] }] },
    });
    added.push(`${componentDir(component)}/${fileName}`);
  }
  // The next catalog no longer names VRLI's binary (a component the installer does not require).
  const [vrli] = catalog.patches.VRLI!;
  const dropped = `${componentDir('VRLI')}/${vrli!.artifacts.bundles[0]!.binaries[0]!.fileName}`;
  delete catalog.patches.VRLI;
  await rm(join(dir, dropped));
  await writeFile(join(dir, DEPOT_PATHS.catalog), `${JSON.stringify(catalog, null, 2)}\n`);
  const manifest = JSON.parse(await readFile(join(dir, DEPOT_PATHS.manifest), 'utf8')) as {
    releases: { version: string; bom: { name: string; version: string }[] }[];
  };
  const first = manifest.releases[0]!;
  first.bom = first.bom.filter((b) => b.name !== 'VRLI');
  manifest.releases.push({
    ...first,
    version: '9.0.1.0',
    bom: first.bom.map((b) => (['VCENTER', 'NSX_T_MANAGER'].includes(b.name) ? { ...b, version: '9.0.1.0.25000000' } : b)),
  });
  await writeFile(join(dir, DEPOT_PATHS.manifest), `${JSON.stringify(manifest, null, 2)}\n`);
  const hcl = JSON.parse(await readFile(join(dir, DEPOT_PATHS.hclAll), 'utf8')) as Record<string, unknown>;
  await writeFile(join(dir, DEPOT_PATHS.hclAll), JSON.stringify({ ...hcl, data: { controller: [{ id: 1 }], hdd: [], ssd: [] } }));
  return { dir, added, dropped };
}

/** Flips one byte at `offset` of a file. */
export async function flipByte(path: string, offset: number): Promise<void> {
  const data = await readFile(path);
  data[offset] = data[offset]! ^ 0xff;
  await writeFile(path, data);
}

export interface DemoFixture {
  /** The file's temporary folder, removed after its tests. */
  base: string;
  /** A demo depot in it, made once for the file; tests copy it before they change it. */
  depot: string;
  /** A new path in the base folder for each call. */
  fresh(name: string): string;
}

/** A file's shared depot: registers the hooks that make it before the file's tests (and its own `beforeAll`s) and remove it after. */
export function demoFixture(prefix: string, binarySize: number): DemoFixture {
  let n = 0;
  let cleanup = async () => undefined as void;
  const fixture: DemoFixture = { base: '', depot: '', fresh: (name) => join(fixture.base, `${name}-${n++}`) };
  beforeAll(async () => {
    ({ dir: fixture.base, cleanup } = await tempDir(prefix));
    fixture.depot = await demo(join(fixture.base, 'depot'), binarySize);
  });
  afterAll(() => cleanup());
  return fixture;
}

/** A tree of two ESX depots, `umds-patch-store/` offering 9.* and `esx-8/` beside it offering 8.* (its metadata zip is the demo's): for a choice of products. */
export async function twoEsxDepots(tree: string): Promise<string> {
  await makeEsxDemo(join(tree, UMDS_PATCH_STORE_DIR));
  await makeEsxDemo(join(tree, 'esx-8'));
  const vendorIndex = join(tree, 'esx-8', 'vendor-index.xml');
  await writeFile(vendorIndex, (await readFile(vendorIndex, 'utf8')).replaceAll('<version>9.*</version>', '<version>8.*</version>'));
  return tree;
}
