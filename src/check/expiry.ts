import { chainVerdict, daysLeft, readCertificate, SERVER_PROFILE, splitPemBlocks, type Certificate } from '../cert/index.js';
import type { Finding } from '../util/findings.js';

/**
 * The CAs of the served certificate's chain: the path to a given CA when it chains to one (the anchor included),
 * else the CA certificates the server sends. Each once, nearest the leaf first.
 */
function chainCas(leaf: string, intermediates: string[], caPems: string[]): Certificate[] {
  if (caPems.length > 0) {
    const verdict = chainVerdict(readCertificate(leaf), intermediates, caPems);
    if (verdict.trusted) return verdict.cas;
  }
  const seen = new Set<string>();
  return intermediates
    .flatMap((p) => splitPemBlocks(p, 'CERTIFICATE'))
    .map((pem) => readCertificate(pem, 'A chain certificate'))
    .filter((c) => c.isCa && !seen.has(c.fingerprints.sha256) && seen.add(c.fingerprints.sha256));
}

/**
 * Expiry seen before it bites, CA by CA: a CA that lapses within the renewal window ends every certificate it
 * vouches for with it, and one that lapses before the leaf cuts the leaf's life short. An expired CA is the
 * lint's (`cert.chain.ca-expired`).
 */
export function caExpiryFindings(leaf: string, intermediates: string[], caPems: string[], now: Date = new Date()): Finding[] {
  const leafInfo = readCertificate(leaf);
  const window = SERVER_PROFILE.validity.renewWithinDays;
  const findings: Finding[] = [];
  for (const ca of chainCas(leaf, intermediates, caPems)) {
    // A leaf trusted as itself, and a CA already expired (the lint's), are not this check's.
    if (ca.fingerprints.sha256 === leafInfo.fingerprints.sha256 || !(now <= ca.notAfter)) continue;
    const left = daysLeft(ca, now);
    const evidence = { ca: ca.subject, sha256: ca.fingerprints.sha256, notAfter: ca.notAfter.toISOString(), daysLeft: left };
    if (left < window) {
      findings.push({
        id: 'tls.ca.expiring-soon',
        severity: 'warning',
        message: `The CA ${ca.subject} expires on ${ca.notAfter.toISOString()}, in ${left} day(s): every certificate it issued stops being trusted with it.`,
        evidence,
        installer: 'Refuses the depot once the CA has expired, whatever the server certificate says.',
        fix: 'Make a new CA (`makeCa`), import it into every consumer (`trustCa`), then issue and serve a certificate from it.',
      });
    }
    if (ca.notAfter < leafInfo.notAfter) {
      findings.push({
        id: 'tls.ca.expires-before-leaf',
        severity: 'warning',
        message: `The CA ${ca.subject} expires on ${ca.notAfter.toISOString()}, before the server certificate (${leafInfo.notAfter.toISOString()}): the certificate is good only until then.`,
        evidence: { ...evidence, leafNotAfter: leafInfo.notAfter.toISOString() },
        fix: 'Plan the CA move before that date: make a new CA, import it into every consumer, then re-issue the server certificate from it.',
      });
    }
  }
  return findings;
}
