import type { X509Certificate } from 'node:crypto';
import { isSelfSigned, issuerPath as pathTo } from '../cert/chain.js';

export { isSelfSigned };

/**
 * The issuers from `leaf` up to a self-signed root, found in `pool`, each
 * signature verified on the way: the intermediates in order, then the root.
 * Undefined when no such path exists.
 */
export function issuerPath(leaf: X509Certificate, pool: readonly X509Certificate[]): X509Certificate[] | undefined {
  return pathTo(leaf, pool, isSelfSigned);
}

/** Whether `leaf` chains through `pool` to a self-signed root. */
export function chainsToRoot(leaf: X509Certificate, pool: readonly X509Certificate[]): boolean {
  return issuerPath(leaf, pool) !== undefined;
}
