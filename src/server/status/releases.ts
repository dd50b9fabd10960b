import type { CatalogEntry } from '../../depot/catalog-entries.js';
import type { ManifestRelease } from '../../depot/manifest-releases.js';
import { planReleases } from '../../depot/release-plan.js';
import { type SeenFile, judgeReleases } from '../../depot/release-status.js';
import { compareVersions, releaseOfVersion } from '../../depot/versions.js';
import { type LookAtFile, componentOf } from './files.js';
import type { StatusComponent, StatusData, StatusRelease } from './types.js';

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byComponent = (a: StatusComponent, b: StatusComponent) => byName(a.name, b.name) || compareVersions(a.version, b.version);

type Grouped = Pick<StatusData, 'grouping' | 'releases' | 'otherComponents'>;

/** A release before it is judged (groupReleases judges each). */
const unjudged = (): Pick<StatusRelease, 'state' | 'counts' | 'problems' | 'message'> => ({
  state: 'metadata-only',
  counts: { binaries: 0, present: 0, missing: 0, wrongBytes: 0, unreadable: 0 },
  problems: [],
  message: '',
});

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
      ...unjudged(),
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
  return {
    grouping: 'catalog',
    releases: [...groups].map(([version, components]) => ({ version, complete: false, ...unjudged(), components })),
    otherComponents: [],
  };
}

/** Each release's state as verify and check judge it, from the sizes the page looked at (nothing hashed). */
async function releaseStates(entries: CatalogEntry[], releases: ManifestRelease[] | undefined, look: LookAtFile) {
  const plans = planReleases(entries, releases);
  const seen = new Map<string, SeenFile>();
  for (const b of plans.catalog) {
    const { state, actualSize } = await look(b.path, b.size, b.checksum);
    seen.set(b.path, state === 'wrong-size' ? { state, ...(actualSize !== undefined ? { actualSize } : {}) } : { state });
  }
  const judged = judgeReleases(plans, (path) => seen.get(path) ?? { state: 'missing' });
  return new Map(judged.releases.map((r) => [r.version, r]));
}

/** The releases the page lists, each with its state, in version order; their components by name and version. */
export async function groupReleases(entries: CatalogEntry[], releases: ManifestRelease[] | undefined, look: LookAtFile): Promise<Grouped> {
  const grouped = releases ? await byManifest(entries, releases, look) : await byCatalog(entries, look);
  const states = await releaseStates(entries, releases, look);
  for (const r of grouped.releases) {
    r.components.sort(byComponent);
    const files = r.components.flatMap((c) => c.files);
    r.complete = files.length > 0 && files.every((f) => f.state === 'present');
    const verdict = states.get(r.version);
    if (verdict) Object.assign(r, { state: verdict.state, counts: verdict.counts, problems: verdict.files, message: verdict.message });
  }
  grouped.releases.sort((a, b) => compareVersions(a.version, b.version));
  grouped.otherComponents.sort(byComponent);
  return grouped;
}
