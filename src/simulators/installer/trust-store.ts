import { readCertificate, type Certificate } from '../../cert/certificate.js';
import { TRUSTED_CERT_ALIAS_PREFIX, TRUSTED_FOR_INBOUND, TRUSTED_FOR_OUTBOUND } from '../../constants.js';
import type { TrustedCertificateView } from './wire.js';

export type UsageType = typeof TRUSTED_FOR_OUTBOUND | typeof TRUSTED_FOR_INBOUND;
export const USAGE_TYPES: readonly UsageType[] = [TRUSTED_FOR_OUTBOUND, TRUSTED_FOR_INBOUND];

export interface StoredCertificate extends TrustedCertificateView {
  usage: UsageType;
  /** The certificate's SHA-256 fingerprint. */
  sha256: string;
}

/** A refused import: the PEM is not one or more readable certificates. */
export class BadCertificate extends Error {}
/** A refused import: the certificate is in the store already. */
export class DuplicateCertificate extends Error {
  constructor(readonly alias: string) {
    super(`The certificate is already trusted, with alias ${alias}.`);
  }
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----\r?\n([A-Za-z0-9+/=\r\n]+?)-----END CERTIFICATE-----/g;

/** Every CERTIFICATE block of `text`, strictly: anything else between the markers is refused. */
export function parseCertificates(text: unknown): Certificate[] {
  if (typeof text !== 'string' || !text.includes('-----BEGIN CERTIFICATE-----')) {
    throw new BadCertificate('The certificate is not PEM text: no BEGIN CERTIFICATE line.');
  }
  const certs: Certificate[] = [];
  for (const match of text.matchAll(PEM_BLOCK)) {
    const der = Buffer.from(match[1]!.replace(/\s+/g, ''), 'base64');
    try {
      certs.push(readCertificate(der));
    } catch {
      throw new BadCertificate('The PEM text does not hold a readable X.509 certificate.');
    }
  }
  const begins = text.split('-----BEGIN CERTIFICATE-----').length - 1;
  if (certs.length === 0 || certs.length !== begins) throw new BadCertificate('The PEM text is damaged: a certificate block is incomplete.');
  return certs;
}

/** The certificate's PEM as the installer returns it: LF line breaks, ending in a newline. */
export function pemOf(cert: Certificate): string {
  const base64 = cert.der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return `-----BEGIN CERTIFICATE-----\n${base64}\n-----END CERTIFICATE-----\n`;
}

/**
 * The documented alias: a fixed prefix, a name taken from the certificate (its
 * CN, else its O, with characters outside [A-Za-z0-9.-] turned into '-'), and
 * the 64 lowercase hex digits of its SHA-256 (the installer's own spelling of the fingerprint), joined by underscores.
 */
export function aliasOf(cert: Certificate): string {
  const field = (name: string) => new RegExp(`(?:^|, )${name}=([^,]*)`).exec(cert.subject)?.[1]?.trim();
  const name = (field('CN') || field('O') || 'certificate').replace(/[^A-Za-z0-9.-]+/g, '-').replace(/^-+|-+$/g, '') || 'certificate';
  return `${TRUSTED_CERT_ALIAS_PREFIX}_${name}_${cert.fingerprints.sha256.replaceAll(':', '').toLowerCase()}`;
}

/** The installer's certificate store, in import order. */
export class TrustStore {
  constructor(readonly entries: StoredCertificate[] = []) {}

  list(): StoredCertificate[] {
    return [...this.entries];
  }

  /** Imports every certificate of `pem`; nothing is imported when one of them is present already. */
  add(pem: unknown, usage: UsageType): StoredCertificate[] {
    const certs = parseCertificates(pem).map((cert) => ({ cert, sha256: cert.fingerprints.sha256 }));
    for (const { sha256 } of certs) {
      const present = this.entries.find((e) => e.sha256 === sha256);
      if (present) throw new DuplicateCertificate(present.alias);
    }
    const added = certs.map(({ cert, sha256 }) => ({ alias: aliasOf(cert), certificate: pemOf(cert), usage, sha256 }));
    // One bundle may repeat a certificate; store it once.
    const unique = added.filter((e, i) => added.findIndex((o) => o.sha256 === e.sha256) === i);
    this.entries.push(...unique);
    return unique;
  }

  delete(alias: string): boolean {
    const index = this.entries.findIndex((e) => e.alias === alias);
    if (index < 0) return false;
    this.entries.splice(index, 1);
    return true;
  }

  /** PEMs the installer trusts for its outbound TLS connections (the depot's among them). */
  outboundPems(): string[] {
    return this.entries.filter((e) => e.usage === TRUSTED_FOR_OUTBOUND).map((e) => e.certificate);
  }
}
