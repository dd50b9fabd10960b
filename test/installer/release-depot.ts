import { createHash, randomBytes } from 'node:crypto';
import { readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEPOT_PATHS, componentDir } from '../../src/constants.js';
import type { Catalog } from '../../src/depot/catalog.js';

/**
 * A depot gains a release as a site's depot does when a new release's metadata
 * and binaries are unpacked into it: new binaries for some components, named
 * in the catalog under the release's versions, and the release in the
 * manifest (its other components at the first release's versions).
 * `catalogDate` backdates the catalog (its Last-Modified) to a chosen time.
 */
export async function addRelease(root: string, release: string, components: string[], size: number, catalogDate?: Date): Promise<void> {
  const catalogPath = join(root, DEPOT_PATHS.catalog);
  const catalog = JSON.parse(await readFile(catalogPath, 'utf8')) as Catalog;
  const versionOf = (i: number) => `${release}.${25000000 + i}`;
  for (const [i, component] of components.entries()) {
    const fileName = `${component.toLowerCase()}-${versionOf(i)}.bin`;
    const data = randomBytes(size);
    await writeFile(join(root, componentDir(component), fileName), data);
    catalog.patches[component]!.push({
      productVersion: versionOf(i),
      artifacts: {
        bundles: [
          {
            name: `bundle-${component}-${release}`,
            type: 'PATCH',
            binaries: [{ fileName, size: data.length, checksum: createHash('sha256').update(data).digest('hex') }],
          },
        ],
      },
    });
  }
  const manifestPath = join(root, DEPOT_PATHS.manifest);
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { releases: Array<{ version: string; bom: Array<{ name: string; version: string }> }> };
  const first = manifest.releases[0]!;
  const bom = first.bom.map((b) => (components.includes(b.name) ? { ...b, version: versionOf(components.indexOf(b.name)) } : b));
  manifest.releases.push({ ...first, version: release, bom });
  await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  await writeFile(catalogPath, `${JSON.stringify(catalog, null, 2)}\n`);
  if (catalogDate) await utimes(catalogPath, catalogDate, catalogDate);
}
