import type { CatalogEntry } from '../../depot/catalog-entries.js';
import type { ManifestRelease } from '../../depot/manifest-releases.js';
import { type ReleasePlan, planReleases } from '../../depot/release-plan.js';
import { type SeenFile, judgeReleases } from '../../depot/release-status.js';
import type { DepotSelection } from '../../depot/selection.js';
import { compareVersions } from '../../util/versions.js';
import { type LookAtFile, componentOf } from './files.js';
import type { StatusComponent, StatusData, StatusRelease } from './types.js';

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byComponent = (a: StatusComponent, b: StatusComponent) => byName(a.name, b.name) || compareVersions(a.version, b.version);

type Grouped = Pick<StatusData, 'grouping' | 'releases' | 'otherComponents' | 'selection'>;

/** Catalog entries as the page lists them, by name and version. */
async function componentsOf(entries: CatalogEntry[], look: LookAtFile): Promise<StatusComponent[]> {
  const components: StatusComponent[] = [];
  for (const e of entries) components.push(await componentOf(e, look));
  return components.sort(byComponent);
}

/** A release's components: the catalog entries it names, and the component versions it names that the catalog lacks. */
async function releaseComponents(plan: ReleasePlan, look: LookAtFile): Promise<StatusComponent[]> {
  const missing = plan.notInCatalog.map((c): StatusComponent => ({ name: c.name, version: c.version, inCatalog: false, files: [] }));
  return [...(await componentsOf(plan.entries, look)), ...missing].sort(byComponent);
}

/**
 * The releases the page lists, in version order, as verify and check group and judge them (release-plan.ts,
 * release-status.ts), here from the sizes the page looked at (nothing hashed); their components by name and version.
 */
export async function groupReleases(
  entries: CatalogEntry[],
  manifest: ManifestRelease[] | undefined,
  look: LookAtFile,
  selection: DepotSelection | undefined,
): Promise<Grouped> {
  const plans = planReleases(entries, manifest);
  const seen = new Map<string, SeenFile>();
  for (const b of plans.catalog) {
    const { state, actualSize } = await look(b.path, b.size, b.checksum);
    seen.set(
      b.path,
      state === 'wrong-size' ? { state, ...(actualSize !== undefined ? { actualSize } : {}) } : { state: state === 'left-out' ? 'missing' : state },
    );
  }
  const verdicts = judgeReleases(plans, (path) => seen.get(path) ?? { state: 'missing' }, selection).releases;
  const releases: StatusRelease[] = [];
  for (const [i, plan] of plans.releases.entries()) {
    const components = await releaseComponents(plan, look);
    const files = components.flatMap((c) => c.files);
    const verdict = verdicts[i]!;
    releases.push({
      version: plan.version,
      ...(plan.releaseDate !== undefined ? { releaseDate: plan.releaseDate } : {}),
      ...(plan.minInstallerVersion !== undefined ? { minInstallerVersion: plan.minInstallerVersion } : {}),
      complete: files.length > 0 && files.every((f) => f.state === 'present'),
      state: verdict.state,
      counts: verdict.counts,
      problems: verdict.files,
      message: verdict.message,
      components,
    });
  }
  return {
    grouping: plans.grouping,
    releases,
    otherComponents: await componentsOf(plans.otherEntries, look),
    ...(selection ? { selection: selection.words } : {}),
  };
}
