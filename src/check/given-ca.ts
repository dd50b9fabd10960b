import { isIP } from 'node:net';
import { readCertificate, splitPemBlocks } from '../cert/index.js';
import type { Finding } from '../util/findings.js';
import { TLS_REJECTION } from './answers.js';

/**
 * A certificate passed as a CA that is not one (no basicConstraints CA:TRUE), typically the depot's
 * own certificate, as fetched with openssl s_client. The installer's Java PKIX, like the lint, trusts
 * a server whose own certificate is in its store, so it works until that certificate is re-issued.
 */
export function leafGivenAsCa(leaf: string, chain: string[], hostName: string, caPems: string[]): Finding[] {
  const served = readCertificate(leaf);
  const findings: Finding[] = [];
  for (const pem of caPems.flatMap((p) => splitPemBlocks(p, 'CERTIFICATE'))) {
    const given = readCertificate(pem, 'A CA certificate');
    if (given.isCa) continue;
    const isServed = given.fingerprints.sha256 === served.fingerprints.sha256;
    const evidence = { subject: given.subject, issuer: given.issuer, sha256: given.fingerprints.sha256, servedCertificate: isServed };
    if (!isServed) {
      findings.push({
        id: 'tls.ca.leaf',
        severity: 'warning',
        message: `The certificate given as CA (${given.subject}) is not a CA (no basicConstraints CA:TRUE), and not the one the depot serves: it vouches for nothing here.`,
        evidence,
        fix: `Pass \`caPems\` with the certificate of the CA that issued the depot's certificate ("${served.issuer}"); \`inspectCert\` <server-chain.pem> \`caPems\` <ca-cert.pem> shows whether a CA file is the right one.`,
      });
      continue;
    }
    findings.push({
      id: 'tls.ca.leaf',
      severity: 'warning',
      message: `The certificate given as CA (${given.subject}) is not a CA (no basicConstraints CA:TRUE): it is the depot's own certificate. It works while exactly this certificate is served, and stops working when the depot's certificate is renewed or re-issued.`,
      evidence,
      installer: `accepts the depot today (its Java trust manager, like this check, trusts a server whose own certificate is in its store); after the next re-issue ${TLS_REJECTION}`,
      fix: servedLeafFix(served.selfSigned, served.issuer, chain.length > 0, hostName),
    });
  }
  return findings;
}

/** The way out of trusting the depot's own certificate: the CA that issued it, or a CA to make when none did. */
function servedLeafFix(selfSigned: boolean, issuer: string, issuerSent: boolean, hostName: string): string {
  const names = isIP(hostName) ? `\`dns\` <depot FQDN> \`ips\` ${hostName}` : `\`dns\` ${hostName}`;
  return selfSigned
    ? `The depot's certificate is self-signed, so nothing can vouch for the next one: make a CA, issue the depot's certificate from it, serve that, and import the CA once: \`makeCa\`; \`issueCert\` \`caDir\` <ca-dir> ${names} \`outDir\` <out-dir>; \`trustCa\` \`caPems\` <ca-dir>/ca-cert.pem (and check with \`caPems\` <ca-dir>/ca-cert.pem).`
    : `Pass \`caPems\` with the certificate of the CA that issued it ("${issuer}")${issuerSent ? ', which the server sends after its own certificate' : ''}, and import that one into the installer: \`trustCa\` \`caPems\` <ca-cert.pem>. For a certificate from \`issueCert\` it is <ca-dir>/ca-cert.pem; \`inspectCert\` <server-chain.pem> \`caPems\` <ca-cert.pem> confirms it.`;
}
