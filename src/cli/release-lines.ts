import type { ReleaseVerdict } from '../depot/release-status.js';

/** Files listed per release before "and N more": --json has them all. */
const SHOWN_FILES = 10;

/**
 * What each release holds, for people: a line per release and, for one that is not metadata only, its files with a
 * problem (the files of a release left out of a cut depot are absent on purpose). Shared by depot verify and check.
 */
export function formatReleases(releases: ReleaseVerdict[], grouping: 'manifest' | 'catalog' | undefined): string[] {
  if (releases.length === 0) return [];
  const lines = [`Releases (${grouping === 'manifest' ? "the manifest's" : "the catalog's product versions"}):`];
  for (const r of releases) {
    lines.push(`  ${r.message}`);
    if (r.state === 'metadata-only') continue;
    for (const f of r.files.slice(0, SHOWN_FILES)) lines.push(`    ${f.message}`);
    if (r.files.length > SHOWN_FILES) lines.push(`    ... and ${r.files.length - SHOWN_FILES} more (use --json for all)`);
  }
  return lines;
}

/** The selection a depot was judged on, said once after its releases (verify and check). */
export function selectionLine(words: string, recorded = false): string {
  const which = recorded ? 'the selection the depot records' : 'the selection';
  return `Judged on ${which} (${words}): a binary it left out is not an error; one it chose and the depot lacks is.`;
}
