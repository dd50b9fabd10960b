import { readCertificate, type Certificate } from './certificate.js';
import { issuerPath } from './chain.js';
import { splitPemBlocks } from './pem.js';

/** Where a leaf chains to: the trusted CA and the CA certificates on the way, or nowhere among `anchors`. */
export type ChainVerdict = { trusted: true; anchor: Certificate; cas: Certificate[] } | { trusted: false; anchors: Certificate[] };

/**
 * Builds a path from the leaf through `intermediatePems` to one of `caPems`,
 * checking signatures and CA flags; `cas` lists the CA certificates above the
 * leaf, nearest first, ending with the anchor (which may be the leaf itself,
 * when it is trusted as it is).
 */
export function chainVerdict(leaf: Certificate, intermediatePems: string[], caPems: string[]): ChainVerdict {
  const read = (what: string) => (pem: string) => readCertificate(pem, what);
  const anchors = caPems.flatMap((p) => splitPemBlocks(p, 'CERTIFICATE')).map(read('A CA certificate'));
  const anchorOf = (cert: Certificate) => anchors.find((a) => a.fingerprints.sha256 === cert.fingerprints.sha256);
  const itself = anchorOf(leaf);
  if (itself) return { trusted: true, anchor: itself, cas: [] };
  // A chain certificate that is also trusted counts once, as the anchor; anchors are tried first.
  const candidates = [...anchors, ...intermediatePems.map(read('A chain certificate')).filter((c) => !anchorOf(c))];
  const cas = issuerPath(leaf, candidates, (cert) => anchorOf(cert) !== undefined);
  if (!cas) return { trusted: false, anchors };
  return { trusted: true, anchor: cas.at(-1)!, cas };
}

/** The first CA on the path that allows fewer CA certificates below it than there are. */
export function pathTooDeep(cas: Certificate[]): Certificate | undefined {
  return cas.find((c, i) => c.pathLen !== undefined && c.pathLen < i);
}
