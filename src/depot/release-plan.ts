import { componentDir } from '../constants.js';
import type { CatalogEntry } from './catalog-entries.js';
import type { ManifestRelease } from './manifest-releases.js';
import { compareVersions, releaseOfVersion } from './versions.js';

// Which binaries each release needs, read the way the status page, verify and check all read it: the manifest's
// releases and the catalog entries their bill of materials names, else the catalog's product versions cut to four
// numbers. Plain reading only (catalog-entries.ts, manifest-releases.ts): the serving process uses it too.

/** One binary a release needs, as the catalog lists it. */
export interface ReleaseBinary {
  /** Web-root-relative path: PROD/COMP/<component>/<fileName>. */
  path: string;
  fileName: string;
  component: string;
  productVersion: string;
  size: number;
  /** Lower-case SHA-256 hex. */
  checksum: string;
}

export interface ReleasePlan {
  version: string;
  /** Each distinct file once, however many of its component versions name it. */
  binaries: ReleaseBinary[];
}

export interface ReleasePlans {
  grouping: 'manifest' | 'catalog';
  releases: ReleasePlan[];
  /** Binaries of catalog entries no release of the manifest names (versions the catalog also offers). */
  others: ReleaseBinary[];
  /** Every binary the catalog names, each path once: where a file of the wrong bytes is looked for. */
  catalog: ReleaseBinary[];
}

function binariesOf(e: CatalogEntry): ReleaseBinary[] {
  return e.binaries.map((b) => ({
    path: `${componentDir(e.component)}/${b.fileName}`,
    fileName: b.fileName,
    component: e.component,
    productVersion: e.productVersion,
    size: b.size,
    checksum: b.checksum.toLowerCase(),
  }));
}

/** Each path once, the first listing kept (the catalog reader refuses one path listed with two contents). */
function distinct(binaries: ReleaseBinary[]): ReleaseBinary[] {
  const seen = new Map<string, ReleaseBinary>();
  for (const b of binaries) if (!seen.has(b.path)) seen.set(b.path, b);
  return [...seen.values()];
}

/** The releases of a depot and the binaries each needs; by the manifest when it lists releases, else by the catalog. */
export function planReleases(entries: CatalogEntry[], manifest: ManifestRelease[] | undefined): ReleasePlans {
  const catalog = distinct(entries.flatMap(binariesOf));
  const byVersion = (a: { version: string }, b: { version: string }) => compareVersions(a.version, b.version);
  if (manifest && manifest.length > 0) {
    const named = new Set<string>();
    const releases = manifest.map((r) => {
      const keys = new Set(r.bom.map((b) => `${b.name}\0${b.version}`));
      keys.forEach((k) => named.add(k));
      return { version: r.version, binaries: distinct(entries.filter((e) => keys.has(`${e.component}\0${e.productVersion}`)).flatMap(binariesOf)) };
    });
    const others = distinct(entries.filter((e) => !named.has(`${e.component}\0${e.productVersion}`)).flatMap(binariesOf));
    return { grouping: 'manifest', releases: releases.sort(byVersion), others, catalog };
  }
  const groups = new Map<string, ReleaseBinary[]>();
  for (const e of entries) {
    const version = releaseOfVersion(e.productVersion);
    let list = groups.get(version);
    // Appended in place: a copy per entry is quadratic in a catalog of many versions.
    if (!list) groups.set(version, (list = []));
    list.push(...binariesOf(e));
  }
  const releases = [...groups].map(([version, list]) => ({ version, binaries: distinct(list) }));
  return { grouping: 'catalog', releases: releases.sort(byVersion), others: [], catalog };
}
