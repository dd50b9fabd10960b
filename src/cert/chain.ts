import type { X509Certificate } from 'node:crypto';

/** Whether `parent` issued `child`: a CA that `child` names as its issuer (subject and key id) and whose key verifies `child`'s signature. */
function issued(parent: X509Certificate, child: X509Certificate): boolean {
  return parent.ca && child.checkIssued(parent) && child.verify(parent.publicKey);
}

/** Subject equals issuer and the certificate verifies with its own key. */
export function isSelfSigned(cert: X509Certificate): boolean {
  return cert.subject === cert.issuer && cert.verify(cert.publicKey);
}

/**
 * The issuers from `start` up to a certificate that `endsAt` accepts (a
 * trusted CA, a self-signed root), nearest first and ending with it; undefined
 * when no such path exists. CAs may share a subject (a renewed CA, a CA made
 * twice with the same name): every candidate that matches by name and key id
 * is tried by its signature, and a branch that leads nowhere gives way to the
 * next candidate. Each certificate is searched from once, so the search stays
 * linear in the candidates' pairs however they are ordered.
 */
export function issuerPath(
  start: X509Certificate,
  candidates: readonly X509Certificate[],
  endsAt: (cert: X509Certificate) => boolean,
): X509Certificate[] | undefined {
  const searched = new Set<X509Certificate>();
  const from = (cert: X509Certificate): X509Certificate[] | undefined => {
    searched.add(cert);
    for (const issuer of candidates) {
      if (searched.has(issuer) || !issued(issuer, cert)) continue;
      if (endsAt(issuer)) return [issuer];
      const rest = from(issuer);
      if (rest) return [issuer, ...rest];
    }
    return undefined;
  };
  return from(start);
}
