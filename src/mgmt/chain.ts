import { X509Certificate } from 'node:crypto';

/** Subject equals issuer and the certificate verifies with its own key. */
export function isSelfSigned(cert: X509Certificate): boolean {
  return cert.subject === cert.issuer && cert.verify(cert.publicKey);
}

/**
 * Walks issuer links from `leaf` through `pool` (CA certificates only) until
 * a self-signed root; every signature on the way must verify.
 */
export function chainsToRoot(leaf: X509Certificate, pool: readonly X509Certificate[]): boolean {
  let cert = leaf;
  for (let depth = 0; depth <= pool.length; depth++) {
    const issuer = pool.find((c) => c.ca && cert.checkIssued(c) && cert.verify(c.publicKey));
    if (!issuer) return false;
    if (isSelfSigned(issuer)) return true;
    cert = issuer;
  }
  return false;
}
