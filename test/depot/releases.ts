import { createHash, randomBytes } from 'node:crypto';
import { copyFile, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEPOT_PATHS, componentDir } from '../../src/constants.js';
import type { Catalog } from '../../src/depot/catalog.js';
import { makeDemoDepot } from '../../src/depot/demo.js';

/** The components each later release brings a new build of; the others it takes unchanged from 9.0.0.0. */
const CHANGED = ['VCENTER', 'NSX_T_MANAGER'];

export interface ReleasesDepot {
  /** 9.0.0.0, every binary here. */
  complete: string;
  /** 9.0.1.0, none of its own binaries here (a depot cut to other releases). */
  metadataOnly: string;
  /** 9.0.2.0, its NSX_T_MANAGER binary missing. */
  missing: { version: string; path: string };
  /** 9.0.3.0, its VCENTER binary holding 9.0.2.0's VCENTER build. */
  otherBuild: { version: string; path: string; holds: string; holdsVersion: string };
}

const fileOf = (component: string, productVersion: string) => `${componentDir(component)}/${component.toLowerCase()}-${productVersion}.bin`;

const LATER = ['9.0.1.0', '9.0.2.0', '9.0.3.0'];

/** The binaries only one of the later releases lists (its new builds); the rest it shares with 9.0.0.0. */
export function ownBinaries(version: string): string[] {
  const r = LATER.indexOf(version);
  if (r < 0) throw new Error(`no later release ${version}`);
  return CHANGED.map((component) => fileOf(component, `${version}.${25000000 + r}`));
}

/**
 * A demo depot of four releases as the vendor's metadata lists them: the manifest's releases each name a build of
 * every component, and 9.0.1.0 to 9.0.3.0 bring new builds of VCENTER and NSX_T_MANAGER (each binary of its own
 * size, so that a size tells one build from another). One release complete, one metadata only, one with a binary
 * missing, one with a file holding another build's bytes.
 */
export async function releasesDepot(root: string, binarySize = 4096): Promise<ReleasesDepot> {
  await makeDemoDepot(root, { binarySize, signingDir: `${root}-signing` });
  const catalogPath = join(root, DEPOT_PATHS.catalog);
  const manifestPath = join(root, DEPOT_PATHS.manifest);
  const catalog = JSON.parse(await readFile(catalogPath, 'utf8')) as Catalog;
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { releases: { version: string; bom: { name: string; version: string }[] }[] };
  const first = manifest.releases[0]!;
  for (const [r, version] of LATER.entries()) {
    const bom = first.bom.map((b) => ({ ...b }));
    for (const [c, component] of CHANGED.entries()) {
      const productVersion = `${version}.${25000000 + r}`;
      const data = randomBytes(binarySize + 100 * (r + 1) + c + 1);
      const path = fileOf(component, productVersion);
      await writeFile(join(root, path), data);
      catalog.patches[component]!.push({
        productVersion,
        artifacts: {
          bundles: [
            {
              name: `bundle-${component}-${version}`,
              type: 'PATCH',
              binaries: [{ fileName: path.slice(path.lastIndexOf('/') + 1), size: data.length, checksum: createHash('sha256').update(data).digest('hex') }],
            },
          ],
        },
      });
      bom.find((b) => b.name === component)!.version = productVersion;
    }
    manifest.releases.push({ ...first, version, bom });
  }
  await writeFile(catalogPath, `${JSON.stringify(catalog, null, 2)}\n`);
  await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  for (const path of ownBinaries('9.0.1.0')) await rm(join(root, path));
  const missing = fileOf('NSX_T_MANAGER', '9.0.2.0.25000001');
  await rm(join(root, missing));
  const other = fileOf('VCENTER', '9.0.3.0.25000002');
  const holds = fileOf('VCENTER', '9.0.2.0.25000001');
  await copyFile(join(root, holds), join(root, other));
  return {
    complete: first.version,
    metadataOnly: '9.0.1.0',
    missing: { version: '9.0.2.0', path: missing },
    otherBuild: { version: '9.0.3.0', path: other, holds, holdsVersion: '9.0.2.0.25000001' },
  };
}
