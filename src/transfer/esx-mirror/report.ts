import type { DepotLockHolder } from '../../depot/lock.js';
import type { EsxProductStatus } from '../../esx/status.js';
import type { Finding } from '../../util/findings.js';
import type { FilesTally } from '../mirror/binaries.js';
import type { ProxyUse } from '../../net/index.js';
import type { EsxSelectionSummary } from './select.js';

export interface EsxMirrorReport extends FilesTally {
  /** Every chosen VIB is in place and verified, the chain read whole, and the indexes written. */
  ok: boolean;
  /** The index URL as given: with `{token}` where the token went, never the token. */
  url: string;
  out: string;
  /** The root index's path in `out`. */
  index: string;
  proxy?: ProxyUse;
  lock: { tookOverFrom?: DepotLockHolder };
  /** What broke in the source's chain (an unreadable vendor index or metadata zip), as `esx verify` words it. */
  findings: Finding[];
  /** Each product of the vendor indexes, and how much of it the mirror holds. */
  products: EsxProductStatus[];
  selection?: EsxSelectionSummary;
  /** The source's seal (`esx <code>`): its indexes and metadata zips, and through them every VIB. */
  seal: string;
  /** `seal`: the source matched the seal given (`expectSeal`); `source`: only the source vouched for itself. */
  vouchedBy: 'seal' | 'source';
  metadata: {
    /** Indexes and metadata zips put in place (zips first, the root index last). */
    written: string[];
    unchanged: string[];
    /** Not put in place: VIBs failed or the chain broke, and an index must never name a file that is not there. */
    held: boolean;
  };
}
