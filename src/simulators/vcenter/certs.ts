import { isIP } from 'node:net';
import { MGMT_CSR_DEFAULT_KEY_SIZE, MGMT_CSR_KEY_SIZES, MGMT_CSR_VALIDITY_DAYS, MGMT_TLS_KEY_FIELD, MGMT_TRUST_ANCHORS_MESSAGE } from '../../constants.js';
import type { CsrSpec, TlsInfo, TlsReplaceSpec } from '../../vcenter/wire.js';
import {
  generateCsr,
  generateKeyPem,
  readCertificate,
  KEY_USAGE_TITLES,
  normalizePem,
  parsePrivateKey,
  pathToRoot,
  selfSignedServerCertificate,
  SERVER_PROFILE,
  sha256Fingerprint,
  splitPemBlocks,
} from '../../cert/index.js';
import type { Certificate } from '../../cert/index.js';
import { DepotkitError, errorMessage } from '../../util/errors.js';

/** A refusal the simulator answers with 400 INVALID_ARGUMENT and this sentence. */
export class InvalidArgument extends Error {}

export interface ServedCertificate {
  certPem: string;
  keyPem: string;
  /** The intermediates served after the leaf, issuer first (none for a certificate a root signed). */
  chainPems?: string[];
}

/** Splits names into DNS names and IP addresses, as a certificate's SAN holds them. */
function namesOf(names: readonly string[]): { dns: string[]; ips: string[] } {
  return { dns: names.filter((n) => isIP(n) === 0), ips: names.filter((n) => isIP(n) !== 0) };
}

/** The server's first certificate: self-signed, with the server's name as CN and SAN, as a fresh install has. */
export async function selfSignedCertificate(hostname: string, listenHost: string): Promise<ServedCertificate> {
  return selfSignedServerCertificate(hostname, listenHost, MGMT_CSR_VALIDITY_DAYS);
}

/** Generates a key and a PKCS#10 request from a CSR spec; the caller keeps the key. */
export async function makeCsr(spec: CsrSpec, hostname: string): Promise<{ csrPem: string; keyPem: string }> {
  const keySize = spec.key_size ?? MGMT_CSR_DEFAULT_KEY_SIZE;
  if (!(MGMT_CSR_KEY_SIZES as readonly number[]).includes(keySize)) {
    throw new InvalidArgument(`key_size must be one of ${MGMT_CSR_KEY_SIZES.join(', ')}, not ${String(spec.key_size)}.`);
  }
  for (const field of ['common_name', 'country', 'email_address', 'locality', 'organization', 'organization_unit', 'state_or_province'] as const) {
    if (spec[field] !== undefined && typeof spec[field] !== 'string') throw new InvalidArgument(`${field} must be a string.`);
  }
  const sans = spec.subject_alt_name ?? [hostname];
  if (!Array.isArray(sans) || sans.some((s) => typeof s !== 'string' || s.trim() === '')) {
    throw new InvalidArgument('subject_alt_name must be a list of host names.');
  }
  const keyPem = await generateKeyPem(keySize);
  try {
    const csrPem = generateCsr({
      keyPem,
      commonName: spec.common_name || hostname,
      ...namesOf(sans.map((s) => s.trim())),
      country: spec.country,
      state: spec.state_or_province,
      locality: spec.locality,
      organization: spec.organization,
      organizationUnit: spec.organization_unit,
      email: spec.email_address,
    });
    return { csrPem, keyPem };
  } catch (err) {
    if (err instanceof DepotkitError) throw new InvalidArgument(err.message);
    throw err;
  }
}

/** Where the replace request is checked against: what the server serves, the CSR key it keeps, the CA certificates it trusts. */
export interface ReplaceContext {
  hostname: string;
  current: ServedCertificate;
  pendingKeyPem?: string;
  /** Roots and intermediates published by earlier replacements (and the first self-signed certificate). */
  trustedRoots: string[];
}

/**
 * Checks a replace request as the real server does and returns what to serve
 * next, with the root_cert certificates to trust from then on; throws
 * InvalidArgument with the server's sentence otherwise.
 */
export function checkReplace(spec: TlsReplaceSpec, ctx: ReplaceContext): ServedCertificate & { chainPems: string[]; rootPems: string[] } {
  for (const field of ['cert', 'root_cert', MGMT_TLS_KEY_FIELD] as const) {
    const value = spec[field];
    if (value === undefined && field !== 'cert') continue;
    if (typeof value !== 'string' || value.trim() === '') throw new InvalidArgument(`${field} must be PEM text.`);
    // The API's known line-ending problem: the real server cannot parse PEM with CRLF.
    if (value.includes('\r')) throw new InvalidArgument(`${field} has CRLF line endings; the server accepts PEM with LF line breaks only.`);
  }
  const certPem = firstCertificate(spec.cert, 'cert');
  const leaf = readCertificate(certPem);
  if (leaf.fingerprints.sha256 === sha256Fingerprint(ctx.current.certPem)) {
    throw new InvalidArgument('The certificate is the same as the current machine certificate; nothing to replace.');
  }
  checkProfile(leaf, ctx.hostname);

  let keyPem: string;
  if (spec[MGMT_TLS_KEY_FIELD] !== undefined) {
    keyPem = readKey(spec[MGMT_TLS_KEY_FIELD]);
    if (!leaf.pairsWith(parsePrivateKey(keyPem))) throw new InvalidArgument('The private key does not match the certificate.');
  } else {
    if (!ctx.pendingKeyPem || !leaf.pairsWith(parsePrivateKey(ctx.pendingKeyPem))) {
      throw new InvalidArgument(
        'The certificate does not match the private key of the last CSR this server generated; a certificate made outside the server needs its key.',
      );
    }
    keyPem = ctx.pendingKeyPem;
  }

  // root_cert may hold a chain: the intermediates, then the root. Its last certificate is the trust
  // anchor; without a self-signed one there, Java's PKIX check has no anchor at all.
  const rootPems = spec.root_cert === undefined ? [] : certificates(spec.root_cert, 'root_cert');
  if (rootPems.length > 0 && !readCertificate(rootPems[rootPems.length - 1]!).selfSigned) {
    throw new InvalidArgument(`root_cert does not end in a self-signed root certificate: ${MGMT_TRUST_ANCHORS_MESSAGE}.`);
  }
  // With root_cert, the whole chain (leaf, its intermediates, the root) must be in it; without, the server's trusted certificates must hold it.
  const pool = (rootPems.length > 0 ? rootPems : ctx.trustedRoots).map((p) => readCertificate(p));
  const path = pathToRoot(leaf, pool);
  if (!path) {
    throw new InvalidArgument(
      rootPems.length > 0
        ? `The certificate chain does not verify against root_cert: ${MGMT_TRUST_ANCHORS_MESSAGE}.`
        : `No root_cert given and the certificate's issuer is not trusted by the server: ${MGMT_TRUST_ANCHORS_MESSAGE}.`,
    );
  }
  const now = Date.now();
  const lapsed = path.find((c) => now < c.notBefore.getTime() || now > c.notAfter.getTime());
  if (lapsed) throw new InvalidArgument(`The certificate chain holds a CA certificate that is not valid at this time: ${lapsed.subject}.`);
  return {
    certPem,
    keyPem: normalizePem(keyPem),
    chainPems: path.slice(0, -1).map((c) => c.pem),
    rootPems: rootPems.map((p) => normalizePem(p)),
  };
}

/**
 * The real server's requirements for a machine certificate (the vendor's
 * documentation), which the server profile meets: RSA of at least its minimum
 * size, and every key usage it issues when the certificate restricts them.
 */
function checkProfile(info: Certificate, hostname: string): void {
  const { key, keyUsage } = SERVER_PROFILE;
  if (info.version !== 3) throw new InvalidArgument('The certificate must be X.509 version 3.');
  if (info.key.type !== key.type || info.key.bits < key.minBits.rsa) {
    throw new InvalidArgument(`The certificate's key must be ${key.type.toUpperCase()} with at least ${key.minBits.rsa} bits.`);
  }
  if (!info.coversHost(hostname)) {
    throw new InvalidArgument(`The certificate's subject alternative names do not include the server's name ${hostname}.`);
  }
  if (info.keyUsage.length > 0 && !keyUsage.usages.every((u) => info.keyUsage.includes(u))) {
    throw new InvalidArgument(`The certificate's key usage must include ${keyUsage.usages.map((u) => KEY_USAGE_TITLES[u]).join(' and ')}.`);
  }
  const now = new Date();
  if (now < info.notBefore || now > info.notAfter) throw new InvalidArgument('The certificate is not valid at this time.');
}

function certificates(text: string, field: string): string[] {
  let blocks: string[];
  try {
    blocks = splitPemBlocks(text, 'CERTIFICATE');
  } catch (err) {
    throw new InvalidArgument(`${field} is not valid PEM: ${errorMessage(err)}`);
  }
  if (blocks.length === 0) throw new InvalidArgument(`${field} holds no certificate.`);
  for (const pem of blocks) {
    try {
      readCertificate(pem);
    } catch {
      throw new InvalidArgument(`${field} holds a block that is not an X.509 certificate.`);
    }
  }
  return blocks;
}

function firstCertificate(text: string, field: string): string {
  return certificates(text, field)[0]!;
}

function readKey(text: string): string {
  try {
    parsePrivateKey(text, MGMT_TLS_KEY_FIELD);
    return text;
  } catch (err) {
    throw new InvalidArgument(errorMessage(err));
  }
}

/** The details `GET .../tls` reports. */
export function tlsInfo(certPem: string): TlsInfo {
  const info = readCertificate(certPem);
  return {
    version: info.version,
    serial_number: info.serial,
    signature_algorithm: info.signatureAlgorithm,
    subject_dn: info.subject,
    issuer_dn: info.issuer,
    valid_from: info.notBefore.toISOString(),
    valid_to: info.notAfter.toISOString(),
    thumbprint: info.fingerprints.sha1,
    is_CA: info.isCa,
    key_usage: info.keyUsage,
    extended_key_usage: info.extKeyUsage,
    subject_alternative_name: [...info.san.dns, ...info.san.ips],
    cert: normalizePem(certPem),
  };
}
