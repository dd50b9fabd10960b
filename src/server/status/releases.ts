import type { CatalogEntry } from '../../depot/catalog-entries.js';
import type { ManifestRelease } from '../../depot/manifest-releases.js';
import { compareVersions, releaseOfVersion } from '../../depot/versions.js';
import { type LookAtFile, componentOf } from './files.js';
import type { StatusComponent, StatusData, StatusRelease } from './types.js';

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byComponent = (a: StatusComponent, b: StatusComponent) => byName(a.name, b.name) || compareVersions(a.version, b.version);

type Grouped = Pick<StatusData, 'grouping' | 'releases' | 'otherComponents'>;

/** The manifest's releases with the catalog entries their bill of materials names; the entries none names are the others. */
async function byManifest(entries: CatalogEntry[], releases: ManifestRelease[], look: LookAtFile): Promise<Grouped> {
  const named = new Set<string>();
  const statusReleases: StatusRelease[] = [];
  for (const r of releases) {
    const components: StatusComponent[] = [];
    for (const b of r.bom) {
      named.add(`${b.name}\0${b.version}`);
      const match = entries.filter((e) => e.component === b.name && e.productVersion === b.version);
      if (match.length === 0) components.push({ name: b.name, version: b.version, inCatalog: false, files: [] });
      for (const m of match) components.push(await componentOf(m, look));
    }
    statusReleases.push({
      version: r.version,
      ...(r.releaseDate !== undefined ? { releaseDate: r.releaseDate } : {}),
      ...(r.minInstallerVersion !== undefined ? { minInstallerVersion: r.minInstallerVersion } : {}),
      complete: false,
      components,
    });
  }
  const otherComponents: StatusComponent[] = [];
  for (const e of entries) if (!named.has(`${e.component}\0${e.productVersion}`)) otherComponents.push(await componentOf(e, look));
  return { grouping: 'manifest', releases: statusReleases, otherComponents };
}

/** Without a manifest: the catalog's product versions cut to four numbers. */
async function byCatalog(entries: CatalogEntry[], look: LookAtFile): Promise<Grouped> {
  const groups = new Map<string, StatusComponent[]>();
  for (const e of entries) {
    const version = releaseOfVersion(e.productVersion);
    groups.set(version, [...(groups.get(version) ?? []), await componentOf(e, look)]);
  }
  return { grouping: 'catalog', releases: [...groups].map(([version, components]) => ({ version, complete: false, components })), otherComponents: [] };
}

/** The releases the page lists, each complete or not, in version order; their components by name and version. */
export async function groupReleases(entries: CatalogEntry[], releases: ManifestRelease[] | undefined, look: LookAtFile): Promise<Grouped> {
  const grouped = releases ? await byManifest(entries, releases, look) : await byCatalog(entries, look);
  for (const r of grouped.releases) {
    r.components.sort(byComponent);
    const files = r.components.flatMap((c) => c.files);
    r.complete = files.length > 0 && files.every((f) => f.state === 'present');
  }
  grouped.releases.sort((a, b) => compareVersions(a.version, b.version));
  grouped.otherComponents.sort(byComponent);
  return grouped;
}
