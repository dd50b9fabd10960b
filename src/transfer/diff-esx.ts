import type { DepotRecord } from './record.js';

export interface DiffEsxProduct {
  vendor: string;
  productId: string;
  version: string;
  /** Its metadata zip (the new side's, for one changed). */
  metadata: string;
}

/** What the ESX depots beside PROD/ add, change and drop. */
export interface DiffEsx {
  /** Products and versions of the vendor indexes: added, removed, or with a metadata zip of other content. */
  products: { added: DiffEsxProduct[]; removed: DiffEsxProduct[]; changed: DiffEsxProduct[] };
  /** VIBs by the metadata (a pack manifest: those it holds): added, of another size or SHA-256, no longer listed. */
  vibs: {
    added: { path: string; size: number }[];
    changed: { path: string; size: number; oldSize: number }[];
    removed: { path: string; size: number }[];
    unchanged: number;
  };
  /** The other files of the depots (indexes, metadata zips), by content. */
  metadata: { added: string[]; changed: string[]; dropped: string[]; unchanged: number };
  bytes: { download: number; carry: number; dropped: number };
}

const keyOf = (p: DiffEsxProduct) => `${p.vendor}\u0000${p.productId}\u0000${p.version}`;
const byPath = <T extends { path: string }>(a: T, b: T) => a.path.localeCompare(b.path);

/** The ESX side of `diffDepots`; undefined when neither side has an ESX depot. */
export function diffEsx(older: DepotRecord, newer: DepotRecord): DiffEsx | undefined {
  if (!older.esx && !newer.esx) return undefined;
  const diff: DiffEsx = {
    products: { added: [], removed: [], changed: [] },
    vibs: { added: [], changed: [], removed: [], unchanged: 0 },
    metadata: { added: [], changed: [], dropped: [], unchanged: 0 },
    bytes: { download: 0, carry: 0, dropped: 0 },
  };
  const productsOf = (r: DepotRecord) => new Map((r.esx?.products ?? []).map((p) => [keyOf(p), p]));
  const [oldProducts, newProducts] = [productsOf(older), productsOf(newer)];
  const content = (r: DepotRecord, path: string) => r.files.get(path)?.sha256;
  for (const [key, p] of newProducts) {
    const item = { vendor: p.vendor, productId: p.productId, version: p.version, metadata: p.metadata };
    const before = oldProducts.get(key);
    if (!before) diff.products.added.push(item);
    else if (before.metadata !== p.metadata || content(older, before.metadata) !== content(newer, p.metadata)) diff.products.changed.push(item);
  }
  for (const [key, p] of oldProducts)
    if (!newProducts.has(key)) diff.products.removed.push({ vendor: p.vendor, productId: p.productId, version: p.version, metadata: p.metadata });

  const [oldVibs, newVibs] = [older.esx?.vibs ?? new Map(), newer.esx?.vibs ?? new Map()];
  for (const [path, v] of newVibs) {
    const before = oldVibs.get(path);
    if (!before) diff.vibs.added.push({ path, size: v.size });
    else if (before.size !== v.size || before.sha256 !== v.sha256) diff.vibs.changed.push({ path, size: v.size, oldSize: before.size });
    else diff.vibs.unchanged++;
  }
  for (const [path, v] of oldVibs) if (!newVibs.has(path)) diff.vibs.removed.push({ path, size: v.size });

  const metadataOf = (r: DepotRecord) => new Map([...r.files].filter(([, f]) => f.kind === 'esx-metadata'));
  const [oldMeta, newMeta] = [metadataOf(older), metadataOf(newer)];
  let metadataBytes = 0;
  for (const [path, f] of newMeta) {
    const before = oldMeta.get(path);
    if (!before) diff.metadata.added.push(path);
    else if (before.sha256 !== f.sha256 || before.size !== f.size) diff.metadata.changed.push(path);
    else {
      diff.metadata.unchanged++;
      continue;
    }
    metadataBytes += f.size;
  }
  for (const path of oldMeta.keys()) if (!newMeta.has(path)) diff.metadata.dropped.push(path);

  for (const list of [diff.vibs.added, diff.vibs.changed, diff.vibs.removed]) list.sort(byPath);
  for (const list of [diff.metadata.added, diff.metadata.changed, diff.metadata.dropped]) list.sort();
  for (const list of [diff.products.added, diff.products.removed, diff.products.changed]) list.sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
  diff.bytes.download = [...diff.vibs.added, ...diff.vibs.changed].reduce((s, v) => s + v.size, 0);
  diff.bytes.carry = diff.bytes.download + metadataBytes;
  diff.bytes.dropped = diff.vibs.removed.reduce((s, v) => s + v.size, 0);
  return diff;
}
