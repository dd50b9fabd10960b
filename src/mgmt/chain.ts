import { X509Certificate } from 'node:crypto';

/** Subject equals issuer and the certificate verifies with its own key. */
export function isSelfSigned(cert: X509Certificate): boolean {
  return cert.subject === cert.issuer && cert.verify(cert.publicKey);
}

/**
 * The issuers from `leaf` up to a self-signed root, found in `pool` (CA
 * certificates only), each signature verified on the way: the intermediates
 * in order, then the root. Undefined when no such path exists.
 */
export function issuerPath(leaf: X509Certificate, pool: readonly X509Certificate[]): X509Certificate[] | undefined {
  const path: X509Certificate[] = [];
  let cert = leaf;
  for (let depth = 0; depth <= pool.length; depth++) {
    const issuer = pool.find((c) => c.ca && !path.includes(c) && cert.checkIssued(c) && cert.verify(c.publicKey));
    if (!issuer) return undefined;
    path.push(issuer);
    if (isSelfSigned(issuer)) return path;
    cert = issuer;
  }
  return undefined;
}

/** Whether `leaf` chains through `pool` to a self-signed root. */
export function chainsToRoot(leaf: X509Certificate, pool: readonly X509Certificate[]): boolean {
  return issuerPath(leaf, pool) !== undefined;
}
