import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DEPOT_PATHS, componentDir } from '../constants.js';
import { type Catalog, catalogBinaries } from '../depot/catalog.js';
import { compareVersions, releaseOfVersion } from '../depot/versions.js';

/** How complete one release of a depot is: every binary its bill of materials needs, present with the catalog's size. */
export interface ReleaseStatus {
  version: string;
  /** Where the grouping came from: the manifest's releases and their BOM, or the catalog's product versions. */
  from: 'manifest' | 'catalog';
  binaries: number;
  present: number;
  missing: string[];
  missingBytes: number;
  complete: boolean;
}

interface ManifestRelease {
  version: string;
  bom: { name: string; version: string }[];
}

/** The manifest's releases, when it has the shape the installer reads (a version and a BOM of component versions). */
function manifestReleases(text: string | undefined): ManifestRelease[] | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as { releases?: unknown };
    if (!Array.isArray(value.releases)) return undefined;
    const releases: ManifestRelease[] = [];
    for (const r of value.releases as { version?: unknown; bom?: unknown }[]) {
      if (typeof r?.version !== 'string' || !Array.isArray(r.bom)) return undefined;
      const bom = (r.bom as { name?: unknown; version?: unknown }[]).filter(
        (b): b is { name: string; version: string } => typeof b?.name === 'string' && typeof b.version === 'string',
      );
      releases.push({ version: r.version, bom });
    }
    return releases.length > 0 ? releases : undefined;
  } catch {
    return undefined;
  }
}

/** The releases a depot's metadata describes: the manifest's, else the catalog's product versions cut to four numbers. */
export function releaseVersions(manifestText: string | undefined, catalog: Catalog): string[] {
  const releases = manifestReleases(manifestText);
  const versions = releases ? releases.map((r) => r.version) : catalogBinaries(catalog).map((b) => releaseOfVersion(b.productVersion));
  return [...new Set(versions)].sort(compareVersions);
}

/**
 * Per release: which binaries it needs and which are there. A newer catalog
 * also names the binaries of older releases, so one depot can serve several;
 * this says which of them an installer could actually download.
 */
export async function releaseStatus(root: string, catalog: Catalog): Promise<ReleaseStatus[]> {
  const manifestText = await readFile(join(root, DEPOT_PATHS.manifest), 'utf8').catch(() => undefined);
  const binaries = catalogBinaries(catalog);
  // Every catalog entry, including the same file named by several versions (catalogBinaries keeps one).
  const byVersion = new Map<string, { path: string; size: number }[]>();
  for (const [component, versions] of Object.entries(catalog.patches)) {
    for (const version of versions) {
      const key = `${component}\0${version.productVersion}`;
      const list = byVersion.get(key) ?? [];
      for (const bundle of version.artifacts.bundles)
        for (const b of bundle.binaries) list.push({ path: `${componentDir(component)}/${b.fileName}`, size: b.size });
      byVersion.set(key, list);
    }
  }
  const groups = new Map<string, { path: string; size: number }[]>();
  const releases = manifestReleases(manifestText);
  const from = releases ? 'manifest' : 'catalog';
  if (releases) {
    for (const r of releases)
      groups.set(
        r.version,
        r.bom.flatMap((b) => byVersion.get(`${b.name}\0${b.version}`) ?? []),
      );
  } else {
    for (const b of binaries) {
      const version = releaseOfVersion(b.productVersion);
      let list = groups.get(version);
      // Appended in place: copying the list for each binary made 200,000 binaries take minutes.
      if (!list) groups.set(version, (list = []));
      list.push({ path: b.path, size: b.size });
    }
  }
  const sizeOnDisk = new Map<string, number | undefined>();
  const present = async (path: string) => {
    if (!sizeOnDisk.has(path))
      sizeOnDisk.set(
        path,
        await stat(join(root, path)).then(
          (s) => (s.isFile() ? s.size : undefined),
          () => undefined,
        ),
      );
    return sizeOnDisk.get(path);
  };
  const out: ReleaseStatus[] = [];
  for (const [version, list] of groups) {
    const unique = [...new Map(list.map((b) => [b.path, b])).values()];
    const missing: { path: string; size: number }[] = [];
    for (const b of unique) if ((await present(b.path)) !== b.size) missing.push(b);
    out.push({
      version,
      from,
      binaries: unique.length,
      present: unique.length - missing.length,
      missing: missing.map((m) => m.path),
      missingBytes: missing.reduce((sum, m) => sum + m.size, 0),
      complete: missing.length === 0 && unique.length > 0,
    });
  }
  return out.sort((a, b) => compareVersions(a.version, b.version));
}
