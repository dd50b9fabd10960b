import { type Catalog, catalogBinaries } from '../depot/catalog.js';
import { releaseVersionsOf } from '../depot/release-plan.js';
import type { ReleaseState } from '../depot/release-status.js';
import type { VerifyResult } from '../depot/verify.js';
import type { BinarySelection, SelectionSummary } from './select.js';

// The release lines of the unpack and mirror reports. Releases are told apart by depot's one release plan and judged
// by its one verdict, as verify, check and the status page do: the report reads verify's judgement, not the disk again.

/** How complete one release of a depot is: every binary its bill of materials needs, present with the catalog's size. */
export interface ReleaseStatus {
  version: string;
  /** Where the grouping came from: the manifest's releases and their BOM, or the catalog's product versions. */
  from: 'manifest' | 'catalog';
  /** The verdict verify, check and the status page give it. */
  state: ReleaseState;
  binaries: number;
  present: number;
  /** Its binaries that are not here with their bytes (missing, unreadable or of another size, or left out by the depot's selection). */
  missing: string[];
  missingBytes: number;
  complete: boolean;
  /** The verdict in one sentence. */
  message: string;
}

/** The releases a depot's metadata describes, as the release plan tells them apart: the manifest's, else the catalog's product versions cut to four numbers. */
export function releaseVersions(manifestText: string | undefined, catalog: Catalog): string[] {
  return releaseVersionsOf(catalog, manifestText);
}

/**
 * Per release, from depot verify's judgement of the depot as it now is: which binaries it needs and which are
 * there. A newer catalog also names the binaries of older releases, so one depot can serve several; this says
 * which of them an installer could actually download.
 */
export function releaseStatus(verify: VerifyResult): ReleaseStatus[] {
  const from = verify.grouping ?? 'catalog';
  return verify.releases.map((r) => ({
    version: r.version,
    from,
    state: r.state,
    binaries: r.counts.binaries,
    present: r.counts.present,
    missing: [...r.files, ...r.leftOut].map((f) => f.path),
    missingBytes: r.bytes.total - r.bytes.present,
    complete: r.state === 'complete',
    message: r.message,
  }));
}

/**
 * A selection's summary with only the binaries left out that the depot does not hold (verify found them missing):
 * one an earlier unpack or mirror of another release placed is here, not left out.
 */
export function leftOutHere(selection: BinarySelection, verify: VerifyResult, catalog: Catalog): SelectionSummary {
  const absent = new Set(verify.findings.filter((f) => f.id === 'binary.missing' && f.path !== undefined && selection.leftOut.has(f.path)).map((f) => f.path!));
  const bytes = catalogBinaries(catalog).reduce((sum, b) => sum + (absent.has(b.path) ? b.size : 0), 0);
  return { ...selection.summary, leftOut: { binaries: absent.size, bytes } };
}
