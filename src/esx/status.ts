import type { EsxMetadata, EsxProduct } from './model.js';

/** What a product and version of the depot holds, as the status page, verify and check say it. */
export type EsxProductState = 'complete' | 'metadata-only' | 'files-missing' | 'metadata-missing';

export interface EsxProductStatus {
  vendor: string;
  productId: string;
  version: string;
  channels: string[];
  metadata: string;
  components: { name: string; version: string }[];
  vibs: number;
  present: number;
  state: EsxProductState;
}

/** Each product of the vendor indexes with what its metadata lists and how much of it is there. */
export function judgeProducts(products: readonly EsxProduct[], metadata: ReadonlyMap<string, EsxMetadata>, present: ReadonlySet<string>): EsxProductStatus[] {
  return products.map((product) => {
    const zip = metadata.get(product.metadata);
    const vibs = zip?.vibs.length ?? 0;
    const there = zip?.vibs.filter((vib) => present.has(vib.path)).length ?? 0;
    const state: EsxProductState = !zip ? 'metadata-missing' : there === vibs ? 'complete' : there === 0 ? 'metadata-only' : 'files-missing';
    const components = (zip?.components ?? []).map((c) => ({ name: c.name ?? c.bulletin, version: c.version ?? '' }));
    return { ...product, components, vibs, present: there, state };
  });
}

/** The one wording of a product's state, for every report. */
export function describeProductState(status: EsxProductStatus): string {
  switch (status.state) {
    case 'complete':
      return `complete (${status.vibs} VIBs)`;
    case 'metadata-only':
      return `metadata only (none of its ${status.vibs} VIBs)`;
    case 'files-missing':
      return `${status.vibs - status.present} of ${status.vibs} VIBs missing`;
    case 'metadata-missing':
      return 'its metadata zip cannot be read';
  }
}
