import { randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import type Forge from 'node-forge';
import { forge } from './forge.js';
import { usageError } from '../util/errors.js';
import { MAX_COMMON_NAME_LENGTH } from '../util/limits.js';
import type { CertificateProfile } from './profiles.js';

/**
 * Building X.509 structures with node-forge, signing natively with
 * node:crypto (forge's pure-JS RSA is slow). Also the fixes for forge's
 * known traps: serial 00, notAfter = notBefore, and an authority key id taken
 * from the leaf instead of the issuer.
 */

// forge exports these but its type definitions leave them out.
const forgePki = () =>
  forge.pki as unknown as {
    getTBSCertificate(cert: Forge.pki.Certificate): Forge.asn1.Asn1;
    getCertificationRequestInfo(csr: Forge.pki.CertificateSigningRequest): Forge.asn1.Asn1;
  };

const forgeUtil = () => forge.util as unknown as { bytesToIP(bytes: string): string; bytesFromIP(ip: string): string };

/** 16 bytes, top bit clear (a positive INTEGER without a 00 pad), second bit set (no leading zero byte). */
export function randomSerialHex(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x40;
  return bytes.toString('hex');
}

/**
 * The latest time a certificate can hold (RFC 5280 4.1.2.5: GeneralizedTime
 * has a four-digit year); forge writes later years as garbage that openssl
 * reads as "Bad time value".
 */
export const LATEST_NOT_AFTER = new Date('9999-12-31T23:59:59Z');

/**
 * The validity period starting at `notBefore` (whole seconds) and lasting
 * `days`; refused with one sentence when it cannot be encoded, so that callers
 * check it before spending time on a key.
 */
export function validityPeriod(notBefore: Date, days: number): { notBefore: Date; notAfter: Date } {
  if (!Number.isInteger(days) || days < 1) throw usageError(`The validity must be a whole number of days, at least 1, not ${days}.`);
  const start = new Date(Math.floor(notBefore.getTime() / 1000) * 1000);
  const end = new Date(start.getTime() + days * 86_400_000);
  // Written as a negation so that an invalid (NaN) date is refused too.
  if (!(end.getTime() <= LATEST_NOT_AFTER.getTime())) {
    throw usageError(
      `A validity of ${days} days would end after ${LATEST_NOT_AFTER.toISOString().replace('.000', '')}, the latest date a certificate can hold.`,
    );
  }
  return { notBefore: start, notAfter: end };
}

/** Sets notBefore and notAfter explicitly (forge's default notAfter equals notBefore). */
export function setValidity(cert: Forge.pki.Certificate, notBefore: Date, days: number): void {
  const period = validityPeriod(notBefore, days);
  cert.validity.notBefore = period.notBefore;
  cert.validity.notAfter = period.notAfter;
}

/** Characters, as X.509 counts them (a UTF-16 surrogate pair is one). */
export function nameLength(value: string): number {
  return [...value].length;
}

/** Refuses a CN longer than X.509 allows: openssl refuses to make one and strict parsers to read one. */
export function assertCommonName(cn: string, what: string): void {
  const length = nameLength(cn);
  if (length > MAX_COMMON_NAME_LENGTH) {
    throw usageError(
      `${what} "${cn}" has ${length} characters; a certificate's CN holds at most ${MAX_COMMON_NAME_LENGTH} (X.509 ub-common-name), and openssl refuses longer ones too.`,
    );
  }
}

/** Subject attributes as UTF8String (PrintableString cannot hold `*`, `_` or `@`); country stays PrintableString. */
export function nameAttributes(fields: Array<[shortName: string, value: string | undefined]>): Forge.pki.CertificateField[] {
  return fields
    .filter((f): f is [string, string] => f[1] !== undefined && f[1] !== '')
    .map(([shortName, value]) => ({
      shortName,
      value,
      valueTagClass: (shortName === 'C' ? forge.asn1.Type.PRINTABLESTRING : forge.asn1.Type.UTF8) as unknown as Forge.asn1.Class,
    }));
}

/**
 * A parsed name's attributes made ready to encode again: forge reads UTF8String
 * values as raw bytes but encodes them as text, so they are decoded first;
 * otherwise a copied issuer name would no longer match its CA byte for byte.
 */
export function copyName(attributes: Forge.pki.CertificateField[]): Forge.pki.CertificateField[] {
  return attributes.map((a) =>
    (a.valueTagClass as unknown as number) === forge.asn1.Type.UTF8 ? { ...a, value: forge.util.decodeUtf8(a.value as string) } : { ...a },
  );
}

export interface AltNames {
  dns: string[];
  ips: string[];
}

export function altNameEntries(names: AltNames): Array<{ type: number; value?: string; ip?: string }> {
  return [...names.dns.map((value) => ({ type: 2, value })), ...names.ips.map((ip) => ({ type: 7, ip }))];
}

/** The key id of an issuer: its own subjectKeyIdentifier, else the RFC 5280 method-1 hash of its key. */
export function issuerKeyId(issuer: Forge.pki.Certificate): string {
  const ski = issuer.getExtension('subjectKeyIdentifier') as { subjectKeyIdentifier?: string } | null;
  if (ski?.subjectKeyIdentifier) return forge.util.hexToBytes(ski.subjectKeyIdentifier);
  return issuer.generateSubjectKeyIdentifier().getBytes();
}

/**
 * The extensions `profile` defines, as node-forge builds them: `authorityKeyId`
 * is the issuer's key id (see {@link issuerKeyId}), `names` the SAN, which is
 * critical when the subject is empty and the profile says so.
 */
export function profileExtensions(profile: CertificateProfile, authorityKeyId: string, names?: AltNames, emptySubject = false): object[] {
  const { basicConstraints: bc, keyUsage, extKeyUsage, keyIdentifiers } = profile;
  const critical = (yes: boolean | undefined) => (yes ? { critical: true } : {});
  const bits = (usages: readonly string[]) => Object.fromEntries(usages.map((u) => [u, true]));
  const extensions: object[] = [
    // forge writes pathLenConstraint whenever the key is there, so it is there only when set.
    { name: 'basicConstraints', cA: bc.ca, ...(bc.pathLen !== undefined ? { pathLenConstraint: bc.pathLen } : {}), ...critical(bc.critical) },
    { name: 'keyUsage', ...bits(keyUsage.usages), ...critical(keyUsage.critical) },
  ];
  if (extKeyUsage) extensions.push({ name: 'extKeyUsage', ...bits(extKeyUsage.usages), ...critical(extKeyUsage.critical) });
  if (keyIdentifiers.subject) extensions.push({ name: 'subjectKeyIdentifier' });
  if (keyIdentifiers.authority) extensions.push({ name: 'authorityKeyIdentifier', keyIdentifier: authorityKeyId });
  if (profile.subjectAltName && names && names.dns.length + names.ips.length > 0) {
    extensions.push({ name: 'subjectAltName', altNames: altNameEntries(names), ...critical(emptySubject && profile.subjectAltName.criticalWhenSubjectEmpty) });
  }
  return extensions;
}

const SHA256_WITH_RSA = (): string => forge.pki.oids.sha256WithRSAEncryption!;

/** Signs `cert` with SHA-256/RSA using node:crypto, leaving it as forge's own sign() would. */
export function signCertificate(cert: Forge.pki.Certificate, key: KeyObject): void {
  const c = cert as Forge.pki.Certificate & { md: unknown; signatureOid: string; tbsCertificate: Forge.asn1.Asn1 };
  c.md = forge.md.sha256.create();
  c.signatureOid = c.siginfo.algorithmOid = SHA256_WITH_RSA();
  c.tbsCertificate = forgePki().getTBSCertificate(cert);
  const tbs = Buffer.from(forge.asn1.toDer(c.tbsCertificate).getBytes(), 'binary');
  c.signature = sign('sha256', tbs, key).toString('binary');
}

export function signRequest(csr: Forge.pki.CertificateSigningRequest, key: KeyObject): void {
  const r = csr as Forge.pki.CertificateSigningRequest & {
    md: unknown;
    signatureOid: string;
    siginfo: { algorithmOid: string };
    certificationRequestInfo: Forge.asn1.Asn1;
  };
  r.md = forge.md.sha256.create();
  r.signatureOid = r.siginfo.algorithmOid = SHA256_WITH_RSA();
  r.certificationRequestInfo = forgePki().getCertificationRequestInfo(csr);
  const info = Buffer.from(forge.asn1.toDer(r.certificationRequestInfo).getBytes(), 'binary');
  r.signature = sign('sha256', info, key).toString('binary');
}

/** Parses one RSA certificate with forge; `source` names it in the error. */
export function forgeCertificate(pem: string, source: string): Forge.pki.Certificate {
  try {
    return forge.pki.certificateFromPem(pem);
  } catch (err) {
    const why = /OID is not RSA/.test((err as Error).message)
      ? 'its key is not RSA, and depotkit signs with RSA keys only'
      : 'it is not a readable X.509 certificate';
    throw usageError(`${source} cannot be used: ${why}.`);
  }
}

const DNS_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Lower-cases, checks and de-duplicates DNS names; a wildcard is allowed as the leftmost label only. */
export function normalizeDnsNames(names: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of names) {
    const name = raw.trim().toLowerCase().replace(/\.$/, '');
    const labels = name.split('.');
    const ok = name.length <= 253 && labels.every((l, i) => (i === 0 && l === '*' && labels.length > 2) || DNS_LABEL.test(l));
    if (!ok) throw usageError(`"${raw}" is not a valid DNS name.`);
    if (isIP(name)) throw usageError(`"${raw}" is an IP address, not a DNS name: give it with \`ips\` ${raw}.`);
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

/** Checks and de-duplicates IP addresses (IPv4 or IPv6), in a canonical spelling. */
export function normalizeIps(ips: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of ips) {
    const ip = raw.trim();
    if (isIP(ip) === 0) throw usageError(`"${raw}" is not an IP address.`);
    const canonical = forgeUtil().bytesToIP(forgeUtil().bytesFromIP(ip));
    if (!out.includes(canonical)) out.push(canonical);
  }
  return out;
}
