import type { Finding } from '../util/findings.js';
import type { Catalog } from './catalog.js';
import { catalogEntriesOf } from './catalog-entries.js';
import type { ManifestRelease } from './manifest-releases.js';
import { type ReleaseBinary, planReleases } from './release-plan.js';
import { type ReleaseJudgement, type SeenFile, judgeReleases } from './release-status.js';
import type { DepotSelection } from './selection.js';

/**
 * What each release of a catalog holds, from what a reader saw of each binary (a path it did not see is taken as
 * missing), and the reader's findings read with it; judged on the depot's recorded selection when it has one
 * (`selectionOf`). Verify and check both end with this.
 */
export function judgeWithFindings(
  catalog: Catalog,
  manifest: ManifestRelease[] | undefined,
  seen: ReadonlyMap<string, SeenFile>,
  findings: Finding[],
  selection?: DepotSelection,
): { judgement: ReleaseJudgement; findings: Finding[] } {
  const plans = planReleases(catalogEntriesOf(catalog), manifest);
  const judgement = judgeReleases(plans, (path) => seen.get(path) ?? { state: 'missing' }, selection);
  return { judgement, findings: findingsWithReleases(findings, judgement, plans.catalog) };
}

/**
 * Verify's and check's findings read with the releases: a binary absent on purpose from a depot cut to some
 * releases (and a component folder that would hold only such binaries) is said as info, not as an error; a file
 * whose bytes are another catalog entry's says which. Other findings are returned as they are.
 */
export function findingsWithReleases(findings: Finding[], judgement: ReleaseJudgement, catalog: ReleaseBinary[]): Finding[] {
  const otherBuilds = new Map(judgement.releases.flatMap((r) => r.files.filter((f) => f.otherBuild).map((f) => [f.path, f.otherBuild!] as const)));
  const versionsOf = releasesListing(judgement);
  const folders = new Map<string, string[]>();
  for (const b of catalog) {
    const folder = b.path.slice(0, b.path.lastIndexOf('/'));
    let list = folders.get(folder);
    // Appended in place: a copy per binary is quadratic in a folder of many versions.
    if (!list) folders.set(folder, (list = []));
    list.push(b.path);
  }
  const excused = (f: Finding): boolean => {
    if (f.severity !== 'error' || f.path === undefined) return false;
    if (f.id === 'binary.missing') return judgement.leftOut.has(f.path);
    const paths = folders.get(f.path);
    return f.id === 'layout.component.missing' && paths !== undefined && paths.every((p) => judgement.leftOut.has(p));
  };
  return findings.map((f) => {
    if (excused(f)) return { ...f, severity: 'info' as const, message: `${f.message} ${leftOutReason(judgement, versionsOf.get(f.path!))}` };
    const other = f.path !== undefined && (f.id === 'binary.size-mismatch' || f.id === 'binary.checksum-mismatch') ? otherBuilds.get(f.path) : undefined;
    if (!other) return f;
    const how = other.by === 'sha256' ? 'Its bytes are those of' : 'Its size is that of';
    // Another entry's size is not a download cut short: the guess the size finding makes is dropped.
    return {
      ...f,
      message: `${f.message.replace(' (a partial download?)', '')} ${how} ${other.fileName} (${other.component} ${other.productVersion}): another build.`,
      evidence: { ...f.evidence, otherBuild: other },
    };
  });
}

/** Why a binary (or a component folder) is absent on purpose, in the words verify, check and the transfers print. */
function leftOutReason(judgement: Pick<ReleaseJudgement, 'selection'>, metadataOnlyReleases?: string[]): string {
  if (judgement.selection !== undefined) return `Left out by the selection this depot records (${judgement.selection}).`;
  const why = metadataOnlyReleases?.length
    ? `release${metadataOnlyReleases.length > 1 ? 's' : ''} ${metadataOnlyReleases.join(', ')}, metadata only here`
    : 'no release this depot holds';
  return `Left out of a depot cut to some releases (${why}).`;
}

/** For each path, the metadata-only releases that list it. */
function releasesListing(judgement: ReleaseJudgement): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of judgement.releases) {
    if (r.state !== 'metadata-only') continue;
    for (const f of r.files) {
      const list = out.get(f.path);
      if (list) list.push(r.version);
      else out.set(f.path, [r.version]);
    }
  }
  return out;
}
