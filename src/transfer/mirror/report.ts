import type { DepotLockHolder } from '../../depot/lock.js';
import type { HclGuard, MetadataChange } from '../../depot/metadata-guard.js';
import type { VerifyResult } from '../../depot/verify.js';
import type { ReleaseStatus } from '../releases.js';
import type { SelectionSummary } from '../select.js';
import type { ProxyUse } from '../../net/index.js';
import type { UpgradeMetadataSource } from './upgrade.js';

export interface MirrorReport {
  /** Every binary the catalog names is in place and verified, and verify passes. */
  ok: boolean;
  url: string;
  out: string;
  /**
   * Who vouched for the catalog: `seal`, a seal carried apart from the source
   * that its catalog matched; `source`, the source alone (its catalog names
   * the binaries' checksums, but nothing checked the catalog itself).
   */
  vouchedBy: 'seal' | 'source';
  /** The source's own seal (`catalog <code>`), to compare with the one the other site carried. */
  seal: string;
  /**
   * The proxy that was named (`proxy` or the environment), without its password, and where it was named;
   * `bypassedBy` when the no-proxy list names the depot and the depot was reached directly. Absent without one.
   */
  proxy?: ProxyUse;
  /** The run whose lock was taken over, when a mirror or another writer had died holding it. */
  lock: { tookOverFrom?: DepotLockHolder };
  metadata: {
    written: string[];
    unchanged: string[];
    /** Files the installer reads that the server does not have (404). */
    missing: string[];
    /** The server's metadata was not put in place: binaries failed and the depot's own metadata was kept. */
    held: boolean;
  };
  /**
   * What the server's metadata changed against the depot's (releases and
   * product versions added, removed) and where the replaced metadata was
   * kept; set when it replaced another catalog. An older one is refused
   * before anything is written unless `force`.
   */
  metadataChange?: MetadataChange;
  /** The source's vSAN HCL is older than the depot's (by its own timestamp) or dated after today: the depot's was kept, or with `force` replaced. */
  hcl?: HclGuard & { backup?: string };
  /**
   * vCenter upgrade metadata (PROD/COMP/VCENTER/vmw/<uuid>/), which the catalog does not name: found in the
   * status of `depotkit serve` or in a folder listing, and copied with the metadata; `none` when the server
   * shows neither, and then whatever the source has of it is not mirrored.
   */
  upgradeMetadata: { source: UpgradeMetadataSource; files: number };
  downloaded: { path: string; size: number; resumedFrom: number }[];
  alreadyInPlace: { path: string; size: number }[];
  failed: { path: string; size: number; reason: string }[];
  /**
   * Partial downloads whose name held something else (a link, a file with
   * other names, another user's file): removed without being followed, and
   * the download started again.
   */
  replacedPartials: { path: string; found: string }[];
  bytesDownloaded: number;
  /** Bytes of files already here (or of partial downloads) read to be recognised or resumed. */
  bytesHashedLocally: number;
  /** Files in component folders that the catalog no longer names (`depotkit depot prune` removes them). */
  stale: number;
  /** With a selection: what was chosen and what was left out (binaries and bytes); the depot is judged on what was chosen. */
  selection?: SelectionSummary;
  releases: ReleaseStatus[];
  verify: VerifyResult;
}

export type MirrorProgress = Omit<MirrorReport, 'ok' | 'releases' | 'verify' | 'stale' | 'selection'>;

const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/** The lists in a stable order, for people and for comparing runs. */
export function sortReport(report: MirrorProgress): void {
  report.downloaded.sort(byPath);
  report.alreadyInPlace.sort(byPath);
  report.failed.sort(byPath);
  report.replacedPartials.sort(byPath);
}
