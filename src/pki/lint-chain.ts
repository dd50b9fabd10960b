import type { X509Certificate } from 'node:crypto';
import { inspectCertificate, parseCertificate, type CertInfo } from './inspect.js';
import { splitPemBlocks } from './pem.js';

/** Where a leaf chains to: the trusted CA and the CA certificates on the way, or nowhere among `anchors`. */
export type ChainVerdict = { trusted: true; anchor: CertInfo; cas: CertInfo[] } | { trusted: false; anchors: CertInfo[] };

interface Candidate {
  x509: X509Certificate;
  info: CertInfo;
}

/**
 * Builds a path from the leaf through `intermediatePems` to one of `caPems`,
 * checking signatures and CA flags; `cas` lists the CA certificates above the
 * leaf, nearest first, ending with the anchor (which may be the leaf itself,
 * when it is trusted as it is).
 */
export function chainVerdict(leaf: X509Certificate, intermediatePems: string[], caPems: string[]): ChainVerdict {
  const read =
    (what: string) =>
    (pem: string): Candidate => ({ x509: parseCertificate(pem, what), info: inspectCertificate(pem, what) });
  const anchors = caPems.flatMap((p) => splitPemBlocks(p, 'CERTIFICATE')).map(read('A CA certificate'));
  const intermediates = intermediatePems.map(read('A chain certificate'));
  const issues = (child: X509Certificate, parent: Candidate) => parent.info.isCa && child.checkIssued(parent.x509) && child.verify(parent.x509.publicKey);
  let current = leaf;
  const path: CertInfo[] = [];
  const used = new Set<number>();
  for (let depth = 0; depth <= intermediates.length; depth++) {
    const anchor = anchors.find((a) => issues(current, a) || a.x509.raw.equals(current.raw));
    if (anchor) return { trusted: true, anchor: anchor.info, cas: anchor.x509.raw.equals(current.raw) ? path : [...path, anchor.info] };
    // Each certificate is used once: the search stays linear in the chain's length for every step.
    const index = intermediates.findIndex((c, i) => !used.has(i) && issues(current, c));
    if (index < 0) break;
    used.add(index);
    path.push(intermediates[index]!.info);
    current = intermediates[index]!.x509;
  }
  return { trusted: false, anchors: anchors.map((a) => a.info) };
}

/** The first CA on the path that allows fewer CA certificates below it than there are. */
export function pathTooDeep(cas: CertInfo[]): CertInfo | undefined {
  return cas.find((c, i) => c.pathLen !== undefined && c.pathLen < i);
}
