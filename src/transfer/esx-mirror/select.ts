import { posix } from 'node:path';
import type { EsxChain } from '../../esx/chain.js';
import type { EsxProduct } from '../../esx/model.js';
import { usageError } from '../../util/errors.js';
import type { MirroredFile } from '../mirror/download.js';

/** Which products and versions of the vendor indexes to download VIBs for; every metadata zip is fetched whatever is chosen. */
export interface EsxSelectOptions {
  /** Product ids as the vendor index writes them (`embeddedEsx`, `esxio`). */
  products?: string[];
  /** Versions as the vendor index writes them (`9.*`), exactly or with `*` standing for any text. */
  versions?: string[];
}

export interface EsxSelectionSummary {
  products: string[];
  versions: string[];
  /** The products of the vendor indexes chosen, as `<productId> <version>`. */
  chosen: string[];
  /** VIBs and bytes that only products not chosen list: not downloaded. */
  leftOut: { vibs: number; bytes: number };
}

const matches = (pattern: string, value: string): boolean =>
  pattern === value ||
  new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  ).test(value);

const selects = (s: EsxSelectOptions | undefined): s is EsxSelectOptions => Boolean(s?.products?.length || s?.versions?.length);

/** The metadata zips whose VIBs are to be downloaded: all, or those of the products chosen. Refuses a choice that matches nothing. */
export function chooseMetadata(chain: Pick<EsxChain, 'products'>, select: EsxSelectOptions | undefined): { metadata: Set<string>; chosen: EsxProduct[] } {
  if (!selects(select)) return { metadata: new Set(chain.products.map((p) => p.metadata)), chosen: chain.products };
  const products = select.products ?? [];
  const versions = select.versions ?? [];
  const chosen = chain.products.filter(
    (p) => (products.length === 0 || products.includes(p.productId)) && (versions.length === 0 || versions.some((v) => matches(v, p.version))),
  );
  if (chosen.length === 0) {
    const offered = [...new Set(chain.products.map((p) => `${p.productId} ${p.version}`))].join(', ') || 'none';
    throw usageError(
      `No product of the depot matches ${[...products, ...versions].join(' ')}; it offers: ${offered}.`,
      'Choose among the products and versions the depot offers.',
    );
  }
  return { metadata: new Set(chosen.map((p) => p.metadata)), chosen };
}

/** Why a VIB cannot be mirrored as the metadata lists it, or undefined when it can. */
function unmirrorable(path: string, size: number | undefined, sha256: string | undefined): string | undefined {
  if (path.startsWith('../') || path.startsWith('/') || path === '..') return 'its path leaves the depot: it is not fetched';
  if (size === undefined || sha256 === undefined) return 'the metadata states no size or SHA-256 for it: its bytes could not be checked, so it is not fetched';
  return undefined;
}

/**
 * The VIBs to download (those the chosen metadata zips list, once each), and those that cannot be
 * mirrored with why; with a selection, what was left out.
 */
export function chooseVibs(chain: EsxChain, metadata: ReadonlySet<string>) {
  const wanted = new Map<string, MirroredFile>();
  const refused = new Map<string, { path: string; size: number; reason: string }>();
  const all = new Map<string, number>();
  for (const [path, zip] of chain.metadata) {
    for (const vib of zip.vibs) {
      all.set(vib.path, vib.size ?? 0);
      if (!metadata.has(path) || wanted.has(vib.path) || refused.has(vib.path)) continue;
      const reason = unmirrorable(vib.path, vib.size, vib.sha256);
      if (reason) refused.set(vib.path, { path: vib.path, size: vib.size ?? 0, reason });
      else wanted.set(vib.path, { path: vib.path, size: vib.size!, checksum: vib.sha256!, fileName: posix.basename(vib.path) });
    }
  }
  const leftOut = [...all].filter(([path]) => !wanted.has(path) && !refused.has(path));
  return {
    wanted: [...wanted.values()],
    refused: [...refused.values()],
    leftOut: { vibs: leftOut.length, bytes: leftOut.reduce((sum, [, size]) => sum + size, 0) },
  };
}

export function selectionSummary(
  select: EsxSelectOptions | undefined,
  chosen: EsxProduct[],
  leftOut: EsxSelectionSummary['leftOut'],
): EsxSelectionSummary | undefined {
  if (!selects(select)) return undefined;
  return { products: select.products ?? [], versions: select.versions ?? [], chosen: chosen.map((p) => `${p.productId} ${p.version}`), leftOut };
}
