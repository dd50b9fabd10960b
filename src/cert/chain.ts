import type { Certificate } from './certificate.js';

/**
 * The issuers from `start` up to a certificate that `endsAt` accepts (a
 * trusted CA, a self-signed root), nearest first and ending with it; undefined
 * when no such path exists. CAs may share a subject (a renewed CA, a CA made
 * twice with the same name): every candidate that matches by name and key id
 * is tried by its signature, and a branch that leads nowhere gives way to the
 * next candidate. Each certificate is searched from once, so the search stays
 * linear in the candidates' pairs however they are ordered.
 */
export function issuerPath(start: Certificate, candidates: readonly Certificate[], endsAt: (cert: Certificate) => boolean): Certificate[] | undefined {
  const searched = new Set<Certificate>();
  const from = (cert: Certificate): Certificate[] | undefined => {
    searched.add(cert);
    for (const issuer of candidates) {
      if (searched.has(issuer) || !issuer.issued(cert)) continue;
      if (endsAt(issuer)) return [issuer];
      const rest = from(issuer);
      if (rest) return [issuer, ...rest];
    }
    return undefined;
  };
  return from(start);
}

/** The issuers from `leaf` up to a self-signed root found in `pool`, each signature verified on the way; undefined when there is no such path. */
export function pathToRoot(leaf: Certificate, pool: readonly Certificate[]): Certificate[] | undefined {
  return issuerPath(leaf, pool, (cert) => cert.selfSigned);
}
