import { type CertificateFacts, readCertificates } from '../../cert/certificate-reader.js';
import type { StatusCa, StatusCertificate } from './types.js';
import { urlHost } from '../../util/url.js';

/** The page's view of a certificate: times as ISO text, so that ages are computed when it is shown. */
function statusCertificate(facts: CertificateFacts): StatusCertificate {
  return {
    subject: facts.subject,
    ...(facts.commonName !== undefined ? { commonName: facts.commonName } : {}),
    issuer: facts.issuer,
    dns: facts.dns,
    ips: facts.ips,
    notBefore: facts.notBefore.toISOString(),
    notAfter: facts.notAfter.toISOString(),
    sha256: facts.sha256,
    isCa: facts.isCa,
    selfSigned: facts.selfSigned,
  };
}

/** A CA certificate's status with its PEM, or undefined when it is not a readable CA certificate (then it is never served). */
function caOf(facts: CertificateFacts | undefined): StatusCa | undefined {
  return facts?.isCa ? { certificate: statusCertificate(facts), pem: facts.pem } : undefined;
}

const UNKNOWN = {
  plainHttp: 'The depot is served over plain HTTP: there is no certificate to trust.',
  leafOnly: 'The certificate file holds only the server certificate, not the CA that issued it: ask whoever issued it for the CA certificate.',
  notCa: 'The last certificate of the chain is not a CA certificate: ask whoever issued the server certificate for the CA certificate.',
} as const;

/** The served leaf, and the CA certificate to trust: `caPem` when given, else the last of the chain when it is a CA. */
export function certificatesOf(certPem: string | undefined, caPem?: string): { certificate: StatusCertificate | null; ca: StatusCa } {
  const given = caPem !== undefined ? caOf(readCertificates(caPem)[0]) : undefined;
  if (certPem === undefined) return { certificate: null, ca: given ?? { certificate: null, unknownReason: UNKNOWN.plainHttp } };
  const chain = readCertificates(certPem);
  const leaf = chain[0];
  const certificate = leaf !== undefined ? statusCertificate(leaf) : null;
  if (given) return { certificate, ca: given };
  if (chain.length < 2) return { certificate, ca: { certificate: null, unknownReason: UNKNOWN.leafOnly } };
  return { certificate, ca: caOf(chain[chain.length - 1]) ?? { certificate: null, unknownReason: UNKNOWN.notCa } };
}

/** The URL to give the installer for a server listening on `host`:`port`: the certificate's name (the installer checks it strictly), else the address. */
export function installerUrl(certPem: string | undefined, host: string, port: number, fallbackHost: string): string {
  let name: string | undefined;
  if (certPem !== undefined) {
    const leaf = readCertificates(certPem)[0];
    const dns = (leaf?.dns ?? []).filter((d) => !d.startsWith('*.'));
    name = dns.find((d) => d !== 'localhost') ?? dns[0] ?? leaf?.ips[0];
  }
  name ??= host === '0.0.0.0' || host === '::' ? fallbackHost : host;
  const shown = urlHost(name);
  const scheme = certPem !== undefined ? 'https' : 'http';
  const defaultPort = scheme === 'https' ? 443 : 80;
  return `${scheme}://${shown}${port === defaultPort ? '' : `:${port}`}`;
}
