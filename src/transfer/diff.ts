import { type DiffEsx, diffEsx } from './diff-esx.js';
import { type DepotRecord, loadRecord } from './record.js';

export interface DiffBinary {
  path: string;
  size: number;
  component: string;
  productVersion: string;
}

export interface DiffSide {
  source: string;
  kind: DepotRecord['kind'];
  release?: string;
  catalogSha256: string | null;
  releases: string[];
}

export interface DiffReport {
  old: DiffSide;
  new: DiffSide;
  /** By the catalogs: what the new one names that the old one does not, names with another size or checksum, or no longer names. */
  binaries: {
    added: DiffBinary[];
    changed: (DiffBinary & { oldSize: number })[];
    dropped: DiffBinary[];
    unchanged: number;
  };
  /** The other files (catalog, manifest, signature, HCL, Compatibility data...), by content. */
  metadata: { added: string[]; changed: string[]; dropped: string[]; unchanged: number };
  releases: { added: string[]; dropped: string[] };
  /** The ESX depots beside PROD/ (umds-patch-store/ ...), when either side has one. */
  esx?: DiffEsx;
  bytes: {
    /** Binaries (and VIBs) to download from the vendor: added and changed. */
    download: number;
    /** What crosses the air gap (what `pack --since <old>` carries): those binaries and VIBs and the new or changed metadata. */
    carry: number;
    /** Binaries the new catalog no longer names, and VIBs no metadata lists any more (what prune frees). */
    dropped: number;
  };
}

function side(record: DepotRecord): DiffSide {
  return { source: record.source, kind: record.kind, release: record.release, catalogSha256: record.catalogSha256, releases: record.releases };
}

/** What a new depot, metadata archive or pack adds, changes and drops against an old one. */
export async function diffDepots(oldSource: string, newSource: string): Promise<DiffReport> {
  const [older, newer] = [await loadRecord(oldSource, 'The old side'), await loadRecord(newSource, 'The new side')];
  const report: DiffReport = {
    old: side(older),
    new: side(newer),
    binaries: { added: [], changed: [], dropped: [], unchanged: 0 },
    metadata: { added: [], changed: [], dropped: [], unchanged: 0 },
    releases: {
      added: newer.releases.filter((r) => !older.releases.includes(r)),
      dropped: older.releases.filter((r) => !newer.releases.includes(r)),
    },
    bytes: { download: 0, carry: 0, dropped: 0 },
  };
  for (const [path, b] of newer.named) {
    const item = { path, size: b.size, component: b.component, productVersion: b.productVersion };
    const before = older.named.get(path);
    if (!before) report.binaries.added.push(item);
    else if (before.size !== b.size || before.sha256 !== b.sha256) report.binaries.changed.push({ ...item, oldSize: before.size });
    else report.binaries.unchanged++;
  }
  for (const [path, b] of older.named)
    if (!newer.named.has(path)) report.binaries.dropped.push({ path, size: b.size, component: b.component, productVersion: b.productVersion });

  const metadataOf = (r: DepotRecord) => new Map([...r.files].filter(([, f]) => f.kind === 'metadata'));
  const [oldMeta, newMeta] = [metadataOf(older), metadataOf(newer)];
  let metadataBytes = 0;
  for (const [path, f] of newMeta) {
    const before = oldMeta.get(path);
    if (!before) report.metadata.added.push(path);
    else if (before.sha256 !== f.sha256 || before.size !== f.size) report.metadata.changed.push(path);
    else {
      report.metadata.unchanged++;
      continue;
    }
    metadataBytes += f.size;
  }
  for (const path of oldMeta.keys()) if (!newMeta.has(path)) report.metadata.dropped.push(path);

  for (const list of [report.binaries.added, report.binaries.changed, report.binaries.dropped]) list.sort((a, b) => a.path.localeCompare(b.path));
  for (const list of [report.metadata.added, report.metadata.changed, report.metadata.dropped]) list.sort();
  report.bytes.download = [...report.binaries.added, ...report.binaries.changed].reduce((s, b) => s + b.size, 0);
  report.bytes.carry = report.bytes.download + metadataBytes;
  report.bytes.dropped = report.binaries.dropped.reduce((s, b) => s + b.size, 0);
  const esx = diffEsx(older, newer);
  if (esx) {
    report.esx = esx;
    report.bytes.download += esx.bytes.download;
    report.bytes.carry += esx.bytes.carry;
    report.bytes.dropped += esx.bytes.dropped;
  }
  return report;
}
