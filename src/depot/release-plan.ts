import { componentDir } from '../constants.js';
import type { Catalog } from './catalog.js';
import { type CatalogEntry, catalogEntriesOf } from './catalog-entries.js';
import { type ManifestRelease, readManifestReleases } from './manifest-releases.js';
import { compareVersions } from '../util/versions.js';
import { releaseOfVersion } from './versions.js';

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
  releaseDate?: string;
  minInstallerVersion?: string;
  /** The catalog entries the release names. */
  entries: CatalogEntry[];
  /** Component versions its bill of materials names that the catalog does not have: nothing to fetch. */
  notInCatalog: { name: string; version: string }[];
  /** Each distinct file once, however many of its component versions name it. */
  binaries: ReleaseBinary[];
}

export interface ReleasePlans {
  grouping: 'manifest' | 'catalog';
  releases: ReleasePlan[];
  /** Catalog entries no release of the manifest names (versions the catalog also offers). */
  otherEntries: CatalogEntry[];
  /** Their binaries. */
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

/** The releases of a depot and the binaries each needs; by the manifest when it can be read, else by the catalog. */
export function planReleases(entries: CatalogEntry[], manifest: ManifestRelease[] | undefined): ReleasePlans {
  const catalog = distinct(entries.flatMap(binariesOf));
  const byVersion = (a: { version: string }, b: { version: string }) => compareVersions(a.version, b.version);
  const key = (name: string, version: string) => `${name}\0${version}`;
  if (manifest) {
    const inCatalog = new Set(entries.map((e) => key(e.component, e.productVersion)));
    const named = new Set<string>();
    const releases = manifest.map((r): ReleasePlan => {
      const keys = new Set(r.bom.map((b) => key(b.name, b.version)));
      keys.forEach((k) => named.add(k));
      const listed = entries.filter((e) => keys.has(key(e.component, e.productVersion)));
      const notInCatalog = [...new Map(r.bom.filter((b) => !inCatalog.has(key(b.name, b.version))).map((b) => [key(b.name, b.version), b])).values()];
      return {
        version: r.version,
        ...(r.releaseDate !== undefined ? { releaseDate: r.releaseDate } : {}),
        ...(r.minInstallerVersion !== undefined ? { minInstallerVersion: r.minInstallerVersion } : {}),
        entries: listed,
        notInCatalog: notInCatalog.map((b) => ({ name: b.name, version: b.version })),
        binaries: distinct(listed.flatMap(binariesOf)),
      };
    });
    const otherEntries = entries.filter((e) => !named.has(key(e.component, e.productVersion)));
    return { grouping: 'manifest', releases: releases.sort(byVersion), otherEntries, others: distinct(otherEntries.flatMap(binariesOf)), catalog };
  }
  const groups = new Map<string, CatalogEntry[]>();
  for (const e of entries) {
    const version = releaseOfVersion(e.productVersion);
    let list = groups.get(version);
    // Appended in place: a copy per entry is quadratic in a catalog of many versions.
    if (!list) groups.set(version, (list = []));
    list.push(e);
  }
  const releases = [...groups].map(([version, list]) => ({ version, entries: list, notInCatalog: [], binaries: distinct(list.flatMap(binariesOf)) }));
  return { grouping: 'catalog', releases: releases.sort(byVersion), otherEntries: [], others: [], catalog };
}

/** The versions of the releases a depot's metadata describes, in order, as the plan tells them apart (a manifest that cannot be read: the catalog's). */
export function releaseVersionsOf(catalog: Catalog, manifestText: string | undefined): string[] {
  const manifest = manifestText === undefined ? undefined : readManifestReleases(manifestText);
  const plans = planReleases(catalogEntriesOf(catalog), typeof manifest === 'string' ? undefined : manifest);
  return [...new Set(plans.releases.map((r) => r.version))];
}
