import { INSTALLER_MIN_RSA_BITS, MGMT_CSR_VALIDITY_DAYS, SERVER_CERT_DEFAULT_DAYS } from '../constants.js';

/**
 * The certificate profiles, defined once as data in the manner of smallstep's
 * x509util templates and minica's options: what a CA and a server certificate
 * hold, with their default validity and key size. Issuing (ca.ts, issue.ts,
 * csr.ts) writes them, the lint (lint-rules.ts) reads its requirements from
 * them, and so does the management simulator's check of a replacement.
 * Kept free of node-forge so that the CLI shows the defaults in its help
 * without loading it.
 */

/** RSA sizes the toolkit makes; the installer and the management server accept them all. */
export const RSA_KEY_SIZES = [2048, 3072, 4096] as const;
export type RsaKeySize = (typeof RSA_KEY_SIZES)[number];

/** The keyUsage bits in RFC 5280 order, as node-forge (and the certificate reader) name them. */
export const KEY_USAGES = [
  'digitalSignature',
  'nonRepudiation',
  'keyEncipherment',
  'dataEncipherment',
  'keyAgreement',
  'keyCertSign',
  'cRLSign',
  'encipherOnly',
  'decipherOnly',
] as const;
export type KeyUsage = (typeof KEY_USAGES)[number];

/** extendedKeyUsage purposes, as node-forge names them. */
export type ExtKeyUsage = 'serverAuth' | 'clientAuth' | 'codeSigning' | 'emailProtection' | 'timeStamping';

/** How openssl's text output and the management server's documentation spell the key usages. */
export const KEY_USAGE_TITLES: Readonly<Record<KeyUsage, string>> = {
  digitalSignature: 'Digital Signature',
  nonRepudiation: 'Non Repudiation',
  keyEncipherment: 'Key Encipherment',
  dataEncipherment: 'Data Encipherment',
  keyAgreement: 'Key Agreement',
  keyCertSign: 'Certificate Sign',
  cRLSign: 'CRL Sign',
  encipherOnly: 'Encipher Only',
  decipherOnly: 'Decipher Only',
};

/** Certificates start this much early, so that a client whose clock lags a little still accepts them. */
const CLOCK_SKEW_MS = 3_600_000;

export interface CertificateProfile {
  /** Subject attributes used when the caller gives none. */
  readonly subject: { readonly commonName?: string };
  readonly basicConstraints: { readonly critical: boolean; readonly ca: boolean; readonly pathLen?: number };
  readonly keyUsage: { readonly critical: boolean; readonly usages: readonly KeyUsage[] };
  readonly extKeyUsage?: { readonly critical: boolean; readonly usages: readonly ExtKeyUsage[] };
  /**
   * subject: a subjectKeyIdentifier, the SHA-1 of the public key (RFC 5280
   * 4.2.1.2, method 1); authority: an authorityKeyIdentifier holding the
   * issuer's key id (a CA's own, when it signs itself).
   */
  readonly keyIdentifiers: { readonly subject: boolean; readonly authority: boolean };
  /** Present when the certificate names hosts; with an empty subject it must be critical (RFC 5280 4.2.1.6). */
  readonly subjectAltName?: { readonly criticalWhenSubjectEmpty: boolean };
  /** Default validity in days, and how far before now it starts. */
  readonly validity: { readonly days: number; readonly backdateMs: number };
  /** The key the toolkit makes by default, and the sizes it makes. */
  readonly key: { readonly type: 'rsa'; readonly bits: RsaKeySize; readonly sizes: readonly RsaKeySize[] };
}

export interface ServerProfile extends CertificateProfile {
  readonly subjectAltName: NonNullable<CertificateProfile['subjectAltName']>;
  readonly keyUsage: CertificateProfile['keyUsage'] & {
    /**
     * The one usage a TLS client needs of any server key, RSA or EC, when
     * the certificate restricts its usages: TLS 1.2 ECDHE and TLS 1.3 sign
     * the handshake with it. keyEncipherment serves only TLS 1.2's RSA key
     * exchange (and means nothing for an EC key), so the lint does not fault
     * a certificate made elsewhere for lacking it.
     */
    readonly tlsRequires: KeyUsage;
  };
  readonly extKeyUsage: NonNullable<CertificateProfile['extKeyUsage']> & {
    /** The purpose a TLS client needs when the certificate lists purposes. */
    readonly tlsRequires: ExtKeyUsage;
  };
  readonly validity: CertificateProfile['validity'] & {
    /** A signed CSR's default: the management server's own flow signs for two years. */
    readonly csrDays: number;
    /** The longest validity browsers accept (the installer does not mind). */
    readonly maxDays: number;
    /** How long before the end a certificate is due for renewal. */
    readonly renewWithinDays: number;
  };
  readonly key: CertificateProfile['key'] & {
    /** The smallest key accepted in a certificate made elsewhere, by key type. */
    readonly minBits: { readonly rsa: number; readonly ec: number };
  };
}

/** Frozen through and through: a caller changes a copy, never the profile every other reader sees. */
function frozen<T extends object>(value: T): T {
  for (const inner of Object.values(value)) if (typeof inner === 'object' && inner !== null) frozen(inner as object);
  return Object.freeze(value);
}

/** A private CA: it signs server certificates only, so no CA may sit below it. */
export const CA_PROFILE = frozen<CertificateProfile>({
  subject: { commonName: 'depotkit private CA' },
  basicConstraints: { critical: true, ca: true, pathLen: 0 },
  keyUsage: { critical: true, usages: ['keyCertSign', 'cRLSign'] },
  keyIdentifiers: { subject: true, authority: true },
  validity: { days: 3650, backdateMs: CLOCK_SKEW_MS },
  key: { type: 'rsa', bits: 3072, sizes: RSA_KEY_SIZES },
});

/**
 * A TLS server certificate as the installer's strict client, the management
 * server (X.509 v3, an RSA key of at least key.minBits.rsa, key usage
 * Digital Signature and Key Encipherment, the SAN naming it) and browsers
 * accept it. Its CN is the first DNS name that fits (see commonNameFor);
 * every name goes in the SAN.
 */
export const SERVER_PROFILE = frozen<ServerProfile>({
  subject: {},
  basicConstraints: { critical: true, ca: false },
  keyUsage: { critical: true, usages: ['digitalSignature', 'keyEncipherment'], tlsRequires: 'digitalSignature' },
  extKeyUsage: { critical: false, usages: ['serverAuth'], tlsRequires: 'serverAuth' },
  keyIdentifiers: { subject: true, authority: true },
  subjectAltName: { criticalWhenSubjectEmpty: true },
  validity: {
    days: SERVER_CERT_DEFAULT_DAYS,
    backdateMs: CLOCK_SKEW_MS,
    csrDays: MGMT_CSR_VALIDITY_DAYS,
    maxDays: SERVER_CERT_DEFAULT_DAYS,
    renewWithinDays: 30,
  },
  key: { type: 'rsa', bits: 2048, sizes: RSA_KEY_SIZES, minBits: { rsa: INSTALLER_MIN_RSA_BITS, ec: 256 } },
});

// The CA defaults under the names the CLI and the package have always exported.
export const DEFAULT_CA_CN: string = CA_PROFILE.subject.commonName!;
export const DEFAULT_CA_DAYS = CA_PROFILE.validity.days;
export const DEFAULT_CA_KEY_SIZE = CA_PROFILE.key.bits;
