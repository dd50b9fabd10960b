import type Forge from 'node-forge';
import { forge } from './forge.js';
import { usageError } from '../util/errors.js';
import { openCa, type CaMaterial } from './ca.js';
import { buildServerCertificate } from './issue.js';
import { forgePublicKey, parsePrivateKey } from './keys.js';
import { parsePemBlocks } from './pem.js';
import { SERVER_PROFILE, type ServerProfile } from './profiles.js';
import { altNameEntries, assertCommonName, copyName, nameAttributes, normalizeDnsNames, normalizeIps, signRequest, type AltNames } from './x509.js';
import { isIP } from 'node:net';

export interface CsrOptions {
  keyPem: string;
  commonName: string;
  dns?: string[];
  ips?: string[];
  country?: string;
  state?: string;
  locality?: string;
  organization?: string;
  organizationUnit?: string;
  email?: string;
}

const CSR_LABELS = ['CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST'];

/** A PKCS#10 request (PEM) signed with `keyPem`, requesting the given SANs. */
export function generateCsr(opts: CsrOptions): string {
  const key = parsePrivateKey(opts.keyPem);
  if (opts.commonName.trim() === '') throw usageError('The CSR common name must not be empty.');
  assertCommonName(opts.commonName.trim(), 'The CSR common name');
  if (opts.country !== undefined && opts.country !== '' && !/^[A-Za-z]{2}$/.test(opts.country)) {
    throw usageError(`The country must be a two-letter code, not "${opts.country}".`);
  }
  const names: AltNames = { dns: normalizeDnsNames(opts.dns ?? []), ips: normalizeIps(opts.ips ?? []) };
  const csr = forge.pki.createCertificationRequest();
  csr.publicKey = forgePublicKey(key);
  csr.setSubject(
    nameAttributes([
      ['C', opts.country?.toUpperCase()],
      ['ST', opts.state],
      ['L', opts.locality],
      ['O', opts.organization],
      ['OU', opts.organizationUnit],
      ['CN', opts.commonName.trim()],
      ['E', opts.email],
    ]),
  );
  if (names.dns.length + names.ips.length > 0) {
    csr.setAttributes([{ name: 'extensionRequest', extensions: [{ name: 'subjectAltName', altNames: altNameEntries(names) }] }]);
  }
  signRequest(csr, key);
  return forge.pki.certificationRequestToPem(csr).replace(/\r\n/g, '\n');
}

/** The subject and requested SANs of a CSR whose self-signature verifies. */
export function readCsr(csrPem: string, source = 'The CSR'): { csr: Forge.pki.CertificateSigningRequest; names: AltNames } {
  const block = parsePemBlocks(csrPem, source).find((b) => CSR_LABELS.includes(b.label));
  if (!block) throw usageError(`${source} holds no CERTIFICATE REQUEST PEM block.`);
  let csr: Forge.pki.CertificateSigningRequest;
  try {
    csr = forge.pki.certificationRequestFromAsn1(forge.asn1.fromDer(block.der.toString('binary')), true);
  } catch (err) {
    const why = /OID is not RSA/.test((err as Error).message)
      ? 'its key is not RSA, and depotkit signs RSA requests only'
      : 'it is not a readable PKCS#10 request';
    throw usageError(`${source} cannot be signed: ${why}.`);
  }
  let verified = false;
  try {
    verified = csr.verify();
  } catch {
    verified = false;
  }
  if (!verified) throw usageError(`${source}'s signature does not verify: the request was altered or not signed by its own key.`);
  const names: AltNames = { dns: [], ips: [] };
  const request = csr.getAttribute({ name: 'extensionRequest' }) as {
    extensions?: Array<{ name?: string; altNames?: Array<{ type: number; value: string; ip?: string }> }>;
  } | null;
  for (const alt of request?.extensions?.find((e) => e.name === 'subjectAltName')?.altNames ?? []) {
    if (alt.type === 2) names.dns.push(alt.value);
    else if (alt.type === 7 && alt.ip) names.ips.push(alt.ip);
  }
  return { csr, names };
}

/** What a CSR asks for; only made once its self-signature verifies. */
export interface CsrInfo {
  subject: string;
  commonName?: string;
  san: AltNames;
  key: { type: 'rsa'; bits: number };
  signatureAlgorithm: string;
}

export function inspectCsr(csrPem: string, source = 'The CSR'): CsrInfo {
  const { csr, names } = readCsr(csrPem, source);
  const attrs = copyName(csr.subject.attributes);
  const cn = attrs.filter((a) => a.shortName === 'CN').pop()?.value as string | undefined;
  return {
    subject: attrs.map((a) => `${a.shortName ?? a.type}=${String(a.value)}`).join(', '),
    ...(cn !== undefined ? { commonName: cn } : {}),
    san: names,
    key: { type: 'rsa', bits: (csr.publicKey as Forge.pki.rsa.PublicKey).n.bitLength() },
    signatureAlgorithm: (forge.pki.oids as Record<string, string>)[(csr as unknown as { signatureOid: string }).signatureOid] ?? 'unknown',
  };
}

/**
 * The server profile's refusal of a certificate the installer rejects: one
 * whose CN is an IP address, or whose only names are IP addresses.
 */
function refuseIpOnly(cn: string | undefined, names: AltNames, allowIpOnly: boolean | undefined): void {
  if (allowIpOnly) return;
  const fix = "Make the request with the host's DNS name as CN and SAN (add it to the installer's hosts file when there is no DNS), or pass `allowIpOnly`.";
  if (cn !== undefined && isIP(cn)) {
    throw usageError(`Refusing to sign the CSR: its CN is an IP address (${cn}), which the installer rejects.`, fix);
  }
  if (names.dns.length === 0 && names.ips.length > 0) {
    throw usageError(
      `Refusing to sign an IP-only CSR (${names.ips.map((ip) => `IP:${ip}`).join(', ')}): it names no DNS host, which the installer rejects.`,
      fix,
    );
  }
}

/**
 * Signs a CSR with the server profile after verifying its self-signature.
 * Subject and requested SANs are copied; other requested extensions are not.
 * A CSR without SANs is refused unless `allowNoSan`: then its CN, when it is
 * a host name or an IP, becomes the only SAN, because clients ignore the CN.
 * Like `issue`, it refuses keys smaller than the profile accepts, and a CN
 * that is an IP or a request without a DNS name unless `allowIpOnly`. The
 * validity is the profile's for signed CSRs unless `days` is given.
 */
export async function signCsr(
  ca: CaMaterial,
  csrPem: string,
  opts: { days?: number; allowNoSan?: boolean; allowIpOnly?: boolean; profile?: ServerProfile } = {},
): Promise<string> {
  const profile = opts.profile ?? SERVER_PROFILE;
  const { csr, names } = readCsr(csrPem);
  const bits = (csr.publicKey as Forge.pki.rsa.PublicKey).n.bitLength();
  const minBits = profile.key.minBits.rsa;
  if (bits < minBits) {
    throw usageError(
      `The CSR's RSA key has ${bits} bits; the installer requires at least ${minBits}.`,
      `Make the request again with a new key of ${minBits} bits or more.`,
    );
  }
  const cn = csr.subject.getField('CN') as { value: string } | null;
  if (names.dns.length + names.ips.length === 0) {
    if (!opts.allowNoSan) {
      throw usageError(
        `The CSR${cn ? ` for ${cn.value}` : ''} requests no subject alternative names; the installer matches host names against the SAN only.`,
        'Make the request with the host name as a SAN, or pass `allowNoSan` to use its CN as the SAN.',
      );
    }
    if (cn && isIP(cn.value)) names.ips.push(cn.value);
    else if (cn) {
      try {
        names.dns.push(...normalizeDnsNames([cn.value]));
      } catch {
        // A CN that is no host name cannot become a SAN; the certificate then has none.
      }
    }
  }
  if (names.dns.length + names.ips.length === 0 && csr.subject.attributes.length === 0) {
    throw usageError('The CSR names nothing: its subject is empty and it requests no subject alternative names.');
  }
  refuseIpOnly(cn?.value, names, opts.allowIpOnly);
  const signer = openCa(ca);
  return buildServerCertificate(signer, {
    subject: copyName(csr.subject.attributes),
    names,
    publicKey: csr.publicKey!,
    days: opts.days ?? profile.validity.csrDays,
    profile,
  });
}
