import type { X509Certificate } from 'node:crypto';
import { inspectCertificate, parseCertificate, type CertInfo } from './inspect.js';
import { issuerPath } from './chain.js';
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
  const anchorOf = (cert: X509Certificate) => anchors.find((a) => a.x509.raw.equals(cert.raw));
  const itself = anchorOf(leaf);
  if (itself) return { trusted: true, anchor: itself.info, cas: [] };
  // A chain certificate that is also trusted counts once, as the anchor; anchors are tried first.
  const candidates = [...anchors, ...intermediatePems.map(read('A chain certificate')).filter((c) => !anchorOf(c.x509))];
  const path = issuerPath(
    leaf,
    candidates.map((c) => c.x509),
    (cert) => anchorOf(cert) !== undefined,
  );
  if (!path) return { trusted: false, anchors: anchors.map((a) => a.info) };
  const cas = path.map((cert) => candidates.find((c) => c.x509 === cert)!.info);
  return { trusted: true, anchor: cas.at(-1)!, cas };
}

/** The first CA on the path that allows fewer CA certificates below it than there are. */
export function pathTooDeep(cas: CertInfo[]): CertInfo | undefined {
  return cas.find((c, i) => c.pathLen !== undefined && c.pathLen < i);
}
