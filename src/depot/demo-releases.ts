import { createHash } from 'node:crypto';
import { type Release, RELEASES, componentsOf } from '../constants.js';
import { usageError } from '../util/errors.js';
import { compareVersions } from '../util/versions.js';

// The releases a demo depot describes: by default one release dated today, as a lab needs; with `releases`, several
// (a GA, its patches, the next GA) with dates fixed by their versions, so that two demos made at different times
// order the same way and the selective mirror, the per-release status and the metadata guard show a difference.

/** Build numbers of the 9.0 GA binaries for the seven required components; the rest are derived from the name. */
const KNOWN_BUILDS: Record<string, number> = {
  ESX_HOST: 24755229,
  NSX_T_MANAGER: 24733065,
  SDDC_MANAGER_VCF: 24703748,
  VCENTER: 24755230,
  VCF_OPS_CLOUD_PROXY: 24695833,
  VRA: 24701403,
  VROPS: 24695812,
  VRSLCM: 24695816,
};

/** The components a patch of a demo release brings a new build of; it keeps its GA's builds of the others. */
export const DEMO_PATCHED_COMPONENTS: readonly string[] = ['VCENTER', 'NSX_T_MANAGER'];

/** The first GA's date in a demo of several releases; each later GA comes 180 days on, each patch 30 days after the one before. */
const FIRST_GA = Date.UTC(2025, 5, 17);
const DAY = 86_400_000;

export function demoVersion(release: Release, component: string, patch = 0): string {
  const base = release === '9.0' ? 0 : 660000;
  const build = (KNOWN_BUILDS[component] ?? 24700000 + (createHash('sha256').update(component).digest().readUInt32BE(0) % 90000)) + base + patch * 1000;
  return `${release}.${patch}.0.${build}`;
}

/** One component version a demo's catalog lists. */
export interface DemoEntry {
  component: string;
  productVersion: string;
  releaseDate: string;
  /** The type of the bundle that carries it. */
  type: 'INSTALL' | 'PATCH';
}

/** One release of the demo's manifest. */
export interface DemoRelease {
  version: string;
  releaseDate: string;
  bom: { name: string; version: string }[];
}

export interface DemoPlan {
  releases: DemoRelease[];
  /** Each component version once, in the order the releases name them. */
  entries: DemoEntry[];
}

/** A release given as `9.0.1` or `9.0.1.0`: its line (9.0) and patch number, or why it cannot be a demo release. */
function parseRelease(given: string): { line: Release; patch: number; version: string } {
  const m = /^(\d+\.\d+)\.(\d{1,2})(?:\.0)?$/.exec(given.trim());
  const line = m?.[1] as Release | undefined;
  if (!m || !line || !RELEASES.includes(line))
    throw usageError(`A demo release is ${RELEASES.map((r) => `${r}.0.0`).join(' or ')}, or one of their patches (e.g. ${RELEASES[0]}.1.0), not "${given}".`);
  const patch = Number(m[2]);
  return { line, patch, version: `${line}.${patch}.0` };
}

/** The one release of a default demo: every component of `release`, dated `now`. */
export function singleRelease(release: Release, now: Date): DemoPlan {
  const releaseDate = now.toISOString().slice(0, 10);
  const entries = componentsOf(release).map((component): DemoEntry => ({
    component,
    productVersion: demoVersion(release, component),
    releaseDate,
    type: 'INSTALL',
  }));
  return { releases: [{ version: `${release}.0.0`, releaseDate, bom: entries.map((e) => ({ name: e.component, version: e.productVersion })) }], entries };
}

/**
 * Several releases, e.g. 9.0.0.0, 9.0.1.0 and 9.1.0.0: a GA names a build of each of its line's components; a
 * patch names new builds of DEMO_PATCHED_COMPONENTS and its GA's builds of the others, so its GA must be listed too.
 */
export function severalReleases(given: readonly string[]): DemoPlan {
  const parsed = [...new Map(given.map(parseRelease).map((r) => [r.version, r])).values()].sort((a, b) => compareVersions(a.version, b.version));
  if (parsed.length === 0) throw usageError('Name at least one release for the demo (`releases`).');
  const entries = new Map<string, DemoEntry>();
  const releases = parsed.map(({ line, patch, version }): DemoRelease => {
    if (patch > 0 && !parsed.some((r) => r.line === line && r.patch === 0))
      throw usageError(`The patch ${version} keeps the builds of ${line}.0.0, which the demo's releases do not name.`, `Add ${line}.0.0 to \`releases\`.`);
    const releaseDate = new Date(FIRST_GA + RELEASES.indexOf(line) * 180 * DAY + patch * 30 * DAY).toISOString().slice(0, 10);
    const bom = componentsOf(line).map((component) => {
      const own = patch > 0 && DEMO_PATCHED_COMPONENTS.includes(component) ? patch : 0;
      const productVersion = demoVersion(line, component, own);
      if (!entries.has(productVersion)) entries.set(productVersion, { component, productVersion, releaseDate, type: own > 0 ? 'PATCH' : 'INSTALL' });
      return { name: component, version: productVersion };
    });
    return { version, releaseDate, bom };
  });
  return { releases, entries: [...entries.values()] };
}
