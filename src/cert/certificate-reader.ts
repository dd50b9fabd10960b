import { X509Certificate } from 'node:crypto';
import { usageError } from '../util/errors.js';
import { parsePemBlocks } from './pem.js';

// Only node:crypto here: the serving process reads its certificate with this module and stays free of
// node-forge (about 8 MB). What node:crypto cannot show (key usages, extensions) is inspect.ts's.

/** What the status page, `depot verify` and `check` read of a certificate. */
export interface CertificateFacts {
  /** One line, in certificate order: `CN=depot.lab.local, O=Lab`. */
  subject: string;
  /** The subject's (last) common name, if any. */
  commonName?: string;
  issuer: string;
  /** The subject alternative names, DNS names and IP addresses, in certificate order. */
  dns: string[];
  ips: string[];
  notBefore: Date;
  notAfter: Date;
  /** The serial number, upper-case hex as node:crypto and openssl show it. */
  serial: string;
  /** SHA-256 of the DER, `AB:CD:...` as browsers and openssl show it. */
  sha256: string;
  /** The same, 64 lowercase hex digits. */
  sha256Hex: string;
  isCa: boolean;
  /** Issued by its own subject and signed by its own key. */
  selfSigned: boolean;
  /** The certificate as canonical PEM (LF line ends, final newline). */
  pem: string;
}

const DAY_MS = 86_400_000;

/** Whole days from `now` until the certificate expires; negative once it has. */
export function daysLeft(facts: Pick<CertificateFacts, 'notAfter'>, now: Date = new Date()): number {
  return Math.floor((facts.notAfter.getTime() - now.getTime()) / DAY_MS);
}

/** Node prints names one attribute a line; one line reads better. */
const oneLine = (name: string): string => name.split('\n').filter(Boolean).join(', ');

/** `DNS:a, IP Address:1.2.3.4` (Node quotes an entry holding a comma or quote as a JSON string) into its names. */
function subjectAltNames(text: string | undefined): { dns: string[]; ips: string[] } {
  const names = { dns: [] as string[], ips: [] as string[] };
  for (const match of (text ?? '').matchAll(/(?:^|, )(?:"((?:[^"\\]|\\.)*)"|([^,]+))/g)) {
    let entry = match[2] ?? match[1] ?? '';
    if (match[1] !== undefined) {
      try {
        entry = JSON.parse(`"${match[1]}"`) as string;
      } catch {
        entry = match[1];
      }
    }
    if (entry.startsWith('DNS:')) names.dns.push(entry.slice(4));
    else if (entry.startsWith('IP Address:')) names.ips.push(entry.slice(11));
  }
  return names;
}

/** The facts of a parsed certificate. */
export function certificateFacts(x509: X509Certificate): CertificateFacts {
  const san = subjectAltNames(x509.subjectAltName);
  const commonName = x509.subject
    .split('\n')
    .filter((l) => l.startsWith('CN='))
    .pop()
    ?.slice(3);
  return {
    subject: oneLine(x509.subject),
    ...(commonName !== undefined ? { commonName } : {}),
    issuer: oneLine(x509.issuer),
    dns: san.dns,
    ips: san.ips,
    notBefore: new Date(x509.validFrom),
    notAfter: new Date(x509.validTo),
    serial: x509.serialNumber,
    sha256: x509.fingerprint256,
    sha256Hex: x509.fingerprint256.replace(/:/g, '').toLowerCase(),
    isCa: x509.ca,
    selfSigned: x509.subject === x509.issuer && x509.verify(x509.publicKey),
    pem: `${x509.toString().trim()}\n`,
  };
}

/**
 * The facts of the first certificate in `pem` (a chain reads as its first); throws one sentence naming
 * `source` when there is none or it is not a readable X.509 certificate.
 */
export function readCertificate(pem: string, source = 'The certificate'): CertificateFacts {
  const block = parsePemBlocks(pem, source).find((b) => b.label === 'CERTIFICATE');
  if (!block) throw usageError(`${source} holds no CERTIFICATE PEM block.`);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(block.der);
  } catch {
    throw usageError(`${source} is not a readable X.509 certificate.`);
  }
  return certificateFacts(x509);
}

/**
 * Every certificate of a chain or bundle that can be read, in order, with `undefined` for a block that is not
 * a certificate X.509 can read; empty when the text is not PEM. For what shows certificates and must not fail.
 */
export function readCertificates(text: string): (CertificateFacts | undefined)[] {
  let blocks;
  try {
    blocks = parsePemBlocks(text);
  } catch {
    return [];
  }
  return blocks
    .filter((b) => b.label === 'CERTIFICATE')
    .map((b) => {
      try {
        return certificateFacts(new X509Certificate(b.der));
      } catch {
        return undefined;
      }
    });
}
