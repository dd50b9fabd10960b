import { type Certificate, readCertificates } from '../../cert/certificate.js';
import type { StatusCa, StatusCertificate } from './types.js';
import { urlHost } from '../../util/url.js';

/** The page's view of a certificate: times as ISO text, so that ages are computed when it is shown. */
function statusCertificate(facts: Certificate): StatusCertificate {
  return {
    subject: facts.subject,
    ...(facts.commonName !== undefined ? { commonName: facts.commonName } : {}),
    issuer: facts.issuer,
    dns: facts.san.dns,
    ips: facts.san.ips,
    notBefore: facts.notBefore.toISOString(),
    notAfter: facts.notAfter.toISOString(),
    sha256: facts.fingerprints.sha256,
    isCa: facts.isCa,
    selfSigned: facts.selfSigned,
  };
}

/** A CA certificate's status with its PEM, or undefined when it is not a readable CA certificate (then it is never served). */
function caOf(facts: Certificate | undefined): StatusCa | undefined {
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

/** The URL the installer is given, and how this host reaches the server when that URL's name does not resolve here. */
export interface ServedUrl {
  url: string;
  /** The same server by an address (`--as-host` the URL's name), for the check command run here; absent when the URL resolves. */
  reachVia?: string;
}

/**
 * The URL to give the installer for a server listening on `host`:`port`: a name of the certificate (the installer
 * checks it strictly), other than localhost and preferably one that resolves here (`resolves`), else the address.
 * A name that does not resolve here is still the installer's (its DNS may know it), and the check command printed
 * beside it reaches the server by an address instead (`reachVia`), so that it runs as it stands.
 */
export async function installerUrl(
  certPem: string | undefined,
  host: string,
  port: number,
  fallbackHost: string,
  resolves: (name: string) => Promise<boolean>,
): Promise<ServedUrl> {
  const scheme = certPem !== undefined ? 'https' : 'http';
  const defaultPort = scheme === 'https' ? 443 : 80;
  const urlOf = (name: string) => `${scheme}://${urlHost(name)}${port === defaultPort ? '' : `:${port}`}`;
  const anyAddress = host === '0.0.0.0' || host === '::';
  if (certPem === undefined) return { url: urlOf(anyAddress ? fallbackHost : host) };
  const leaf = readCertificates(certPem)[0];
  const dns = (leaf?.san.dns ?? []).filter((d) => !d.startsWith('*.'));
  const names = dns.filter((d) => d !== 'localhost');
  for (const name of names) if (await resolves(name)) return { url: urlOf(name) };
  const name = names[0] ?? dns[0] ?? leaf?.san.ips[0] ?? (anyAddress ? fallbackHost : host);
  if (name === 'localhost' || leaf?.san.ips.includes(name)) return { url: urlOf(name) };
  // Reached here over the loopback when the server listens on every address, else on the one it listens on.
  return { url: urlOf(name), reachVia: urlOf(anyAddress ? (host === '::' ? '::1' : '127.0.0.1') : host) };
}
