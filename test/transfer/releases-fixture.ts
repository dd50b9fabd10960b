import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEPOT_PATHS, componentDir } from '../../src/constants.js';
import { readCatalog, sha256 } from './helpers.js';

/** A binary a release added: its depot path and size. */
export interface AddedBinary {
  path: string;
  size: number;
}

/**
 * A patch release of some components, as the vendor's metadata has one: new
 * binaries listed in the catalog under its version, and a release in the
 * manifest whose bill of materials names them and keeps the GA builds of the
 * other components. Returns the binaries it added.
 */
export async function addRelease(root: string, release: string, components: string[], sizes: number[]): Promise<AddedBinary[]> {
  const catalog = await readCatalog(root);
  const list: AddedBinary[] = [];
  for (const [i, component] of components.entries()) {
    const productVersion = `${release}.${25000000 + i}`;
    const fileName = `${component.toLowerCase()}-${productVersion}.bin`;
    const data = randomBytes(sizes[i]!);
    await writeFile(join(root, componentDir(component), fileName), data);
    catalog.patches[component]!.push({
      productVersion,
      artifacts: { bundles: [{ name: `bundle-${component}-${release}`, type: 'PATCH', binaries: [{ fileName, size: data.length, checksum: sha256(data) }] }] },
    });
    list.push({ path: `${componentDir(component)}/${fileName}`, size: data.length });
  }
  await writeFile(join(root, DEPOT_PATHS.catalog), `${JSON.stringify(catalog, null, 2)}\n`);
  const manifest = JSON.parse(await readFile(join(root, DEPOT_PATHS.manifest), 'utf8')) as {
    releases: { version: string; bom: { name: string; version: string }[] }[];
  };
  const first = manifest.releases[0]!;
  const bom = first.bom.map((b) => (components.includes(b.name) ? { ...b, version: `${release}.${25000000 + components.indexOf(b.name)}` } : b));
  manifest.releases.push({ ...first, version: release, bom });
  await writeFile(join(root, DEPOT_PATHS.manifest), `${JSON.stringify(manifest, null, 2)}\n`);
  return list;
}

/** The binaries of the depot's first (GA) release, by path and size. */
export async function firstReleaseBinaries(root: string): Promise<AddedBinary[]> {
  const catalog = await readCatalog(root);
  return Object.entries(catalog.patches).flatMap(([component, versions]) =>
    versions[0]!.artifacts.bundles[0]!.binaries.map((b) => ({ path: `${componentDir(component)}/${b.fileName}`, size: b.size })),
  );
}
