import { createHash } from 'node:crypto';
import { BUNDLE_TYPES, INSTALLER_IMAGE_TYPES, apiComponentName, componentDir } from '../../constants.js';
import type { Catalog } from '../../depot/catalog.js';
import type { ManifestRelease, SyncedMetadata } from './sync.js';

/** One bundle of the synced catalog: a component version's set of binaries. */
export interface SimBundle {
  /** Stable across syncs and restarts: derived from component, version and bundle name. */
  id: string;
  component: string;
  productVersion: string;
  name: string;
  /** The catalog's bundle type, INSTALL or PATCH. */
  type: string;
  releaseDate?: string;
  binaries: Array<{ fileName: string; size: number; checksum: string; path: string }>;
  size: number;
}

/** A UUID-shaped id from a hash, so that the same bundle keeps its id. */
export function stableId(key: string): string {
  const hex = createHash('sha256').update(key).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function bundlesOf(catalog: Catalog): SimBundle[] {
  const bundles: SimBundle[] = [];
  for (const [component, versions] of Object.entries(catalog.patches)) {
    for (const version of versions) {
      for (const bundle of version.artifacts.bundles) {
        const binaries = bundle.binaries.map((b) => ({
          fileName: b.fileName,
          size: b.size,
          checksum: b.checksum.toLowerCase(),
          path: `${componentDir(component)}/${b.fileName}`,
        }));
        bundles.push({
          id: stableId(`${component}\0${version.productVersion}\0${bundle.name}`),
          component,
          productVersion: version.productVersion,
          name: bundle.name,
          type: bundle.type,
          releaseDate: version.releaseDate,
          binaries,
          size: binaries.reduce((sum, b) => sum + b.size, 0),
        });
      }
    }
  }
  return bundles;
}

/**
 * The bundles a release's image type needs: INSTALL takes each BOM version's
 * INSTALL bundles, or its PATCH bundles when it has no INSTALL one (a release
 * may catalogue an installer image as a patch); UPGRADE takes PATCH bundles.
 */
export function releaseBundles(release: ManifestRelease, bundles: SimBundle[], imageType?: string): SimBundle[] {
  const [INSTALL, UPGRADE] = INSTALLER_IMAGE_TYPES;
  const chosen: SimBundle[] = [];
  for (const entry of release.bom) {
    const ofVersion = bundles.filter((b) => b.component === entry.name && b.productVersion === entry.version);
    const install = ofVersion.filter((b) => b.type === BUNDLE_TYPES[0]);
    if (imageType === UPGRADE) chosen.push(...ofVersion.filter((b) => b.type !== BUNDLE_TYPES[0]));
    else if (imageType === INSTALL) chosen.push(...(install.length > 0 ? install : ofVersion));
    else chosen.push(...ofVersion);
  }
  return chosen;
}

/** `GET /v1/releases/{sku}/release-components` elements. */
export function releaseComponents(metadata: SyncedMetadata, bundles: SimBundle[], sku: string, releaseVersion?: string, imageType?: string): object[] {
  return metadata.releases
    .filter((r) => releaseVersion === undefined || r.version === releaseVersion)
    .map((release) => {
      const chosen = releaseBundles(release, bundles, imageType);
      const components = release.bom
        .map((entry) => {
          const own = chosen.filter((b) => b.component === entry.name);
          if (own.length === 0) return undefined;
          // The API's name, which differs from the manifest's and the depot folder's for SDDC Manager.
          const name = apiComponentName(entry.name);
          return {
            name,
            publicName: name,
            sku,
            automatedInstall: true,
            versions: [
              {
                productVersion: entry.version,
                ...(own[0]!.releaseDate ? { date: own[0]!.releaseDate } : {}),
                artifacts: { bundles: own.map((b) => ({ id: b.id, name: b.name, size: b.size, type: b.type })) },
              },
            ],
          };
        })
        .filter((c) => c !== undefined);
      return { releaseVersion: release.version, components };
    });
}

/** `GET /v1/releases` elements. */
export function releasesView(metadata: SyncedMetadata, sku: string): object[] {
  return metadata.releases.map((r) => ({
    product: sku,
    version: r.version,
    releaseDate: r.releaseDate ?? '',
    description: `${sku} ${r.version}`,
    ...(r.minInstallerVersion ? { minInstallerVersion: r.minInstallerVersion } : {}),
    bom: r.bom.map((b) => ({ name: b.name, publicName: b.name, version: b.version })),
  }));
}
