import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Forge from 'node-forge';
import { forge } from './forge.js';
import { argumentsError, usageError } from '../util/errors.js';
import { MAX_COMMON_NAME_LENGTH } from '../util/limits.js';
import { makeDir, writeFileSetAtomic } from '../util/fs.js';
import { keptAttributes } from './replaced-files.js';
import { openCa, type CaMaterial, type CaSigner } from './ca.js';
import { readCertificate } from './certificate.js';
import { PRIVATE_DIR_MODE, PRIVATE_KEY_MODE, PUBLIC_FILE_MODE, SERVER_CERT_FILE, SERVER_CHAIN_FILE, SERVER_KEY_FILE } from './files.js';
import { forgePublicKey, generateKeyPem, parsePrivateKey } from './keys.js';
import { normalizePem, splitPemBlocks } from './pem.js';
import { SERVER_PROFILE, type ServerProfile } from './profiles.js';
import {
  copyName,
  issuerKeyId,
  nameAttributes,
  nameLength,
  normalizeDnsNames,
  normalizeIps,
  profileExtensions,
  randomSerialHex,
  setValidity,
  signCertificate,
  validityPeriod,
  type AltNames,
} from './x509.js';

export interface ServerMaterial {
  keyPem: string;
  certPem: string;
  /** The leaf followed by the CA certificate. */
  chainPem: string;
}

export interface IssueOptions {
  dns: string[];
  ips?: string[];
  days?: number;
  keySize?: number;
  notBefore?: Date;
  /** Allow a certificate without any DNS name; the installer will reject it. */
  allowIpOnly?: boolean;
  /** The server profile unless given. */
  profile?: ServerProfile;
}

/**
 * A new key and server certificate signed by `ca`: CN = the first DNS name,
 * SAN = every DNS name and IP, the server profile with its validity and key
 * size by default (the validity capped at the CA's own end).
 */
export async function issueServerCert(ca: CaMaterial, opts: IssueOptions): Promise<ServerMaterial> {
  const names: AltNames = { dns: normalizeDnsNames(opts.dns), ips: normalizeIps(opts.ips ?? []) };
  if (names.dns.length === 0 && names.ips.length === 0) throw argumentsError('A server certificate needs at least one DNS name.');
  if (names.dns.length === 0 && !opts.allowIpOnly) {
    throw usageError(
      'Refusing an IP-only certificate: its CN would be an IP address, which the installer rejects.',
      "Give the depot a DNS name with `dns` (add it to the installer's hosts file when there is no DNS), or pass `allowIpOnly`.",
    );
  }
  const cn = commonNameFor(names);
  const signer = openCa(ca);
  const profile = opts.profile ?? SERVER_PROFILE;
  const days = opts.days ?? profile.validity.days;
  const notBefore = opts.notBefore ?? new Date(Date.now() - profile.validity.backdateMs);
  // Checked before the key is made: a validity that cannot be encoded fails at once.
  validityPeriod(notBefore, days);
  const keyPem = await generateKeyPem(opts.keySize ?? profile.key.bits);
  const certPem = buildServerCertificate(signer, {
    subject: nameAttributes([['CN', cn]]),
    names,
    publicKey: forgePublicKey(parsePrivateKey(keyPem)),
    days,
    notBefore,
    profile,
  });
  return { keyPem, certPem, chainPem: certPem + signer.certPem };
}

/**
 * The CN of a server certificate: the first DNS name that fits in a CN (64
 * characters, as openssl enforces), else the first IP. A longer name stays in
 * the SAN, which is what the installer's TLS client (and every browser)
 * checks when a SAN is there. Without any name that fits, refused.
 */
export function commonNameFor(names: AltNames): string | undefined {
  if (names.dns.length === 0) return names.ips[0];
  const fits = names.dns.find((d) => nameLength(d) <= MAX_COMMON_NAME_LENGTH);
  if (fits !== undefined) return fits;
  throw usageError(
    `The DNS name "${names.dns[0]}" has ${nameLength(names.dns[0]!)} characters; a certificate's CN holds at most ${MAX_COMMON_NAME_LENGTH} (X.509 ub-common-name), and openssl refuses longer ones too.`,
    'Add a shorter name with another `dns` (e.g. the short host name) to be the CN; the long name stays in the SAN, which is what the installer checks.',
  );
}

/** Signs a leaf with the server profile (or `spec.profile`); shared by issue and CSR signing. */
export function buildServerCertificate(
  signer: CaSigner,
  spec: { subject: Forge.pki.CertificateField[]; names: AltNames; publicKey: Forge.pki.PublicKey; days: number; notBefore?: Date; profile?: ServerProfile },
): string {
  const profile = spec.profile ?? SERVER_PROFILE;
  const cert = forge.pki.createCertificate();
  cert.serialNumber = randomSerialHex();
  setValidity(cert, spec.notBefore ?? new Date(Date.now() - profile.validity.backdateMs), spec.days);
  // A certificate cannot be trusted past its CA's end, so it is not made to claim more.
  if (cert.validity.notAfter > signer.cert.validity.notAfter) cert.validity.notAfter = signer.cert.validity.notAfter;
  cert.setSubject(spec.subject);
  cert.setIssuer(copyName(signer.cert.subject.attributes));
  cert.publicKey = spec.publicKey;
  cert.setExtensions(profileExtensions(profile, issuerKeyId(signer.cert), spec.names, spec.subject.length === 0));
  signCertificate(cert, signer.key);
  return normalizePem(forge.pki.certificateToPem(cert));
}

/**
 * Writes a server folder: key 0600, certificate and chain 0644; nothing is
 * replaced without `force`, and a replacement never leaves the new key beside
 * the old certificate (see {@link writeFileSetAtomic}).
 */
export async function writeServerDir(
  dir: string,
  material: ServerMaterial,
  options: { force?: boolean } = {},
): Promise<{ keyPath: string; certPath: string; chainPath: string }> {
  const keyPath = join(dir, SERVER_KEY_FILE);
  const certPath = join(dir, SERVER_CERT_FILE);
  const chainPath = join(dir, SERVER_CHAIN_FILE);
  // Made for the key: its owner's only (an existing folder keeps its mode).
  await makeDir(dir, PRIVATE_DIR_MODE);
  // A renewal in place keeps what the server that reads these files needs (an exported Caddy site reads the key through its group).
  const kept = [];
  for (const [path, kind] of [
    [keyPath, 'private-key'],
    [certPath, 'public'],
    [chainPath, 'public'],
  ] as const)
    kept.push(options.force ? await keptAttributes(path, kind) : {});
  await writeFileSetAtomic(
    [
      { path: keyPath, data: normalizePem(material.keyPem), mode: PRIVATE_KEY_MODE, ...kept[0] },
      { path: certPath, data: normalizePem(material.certPem), mode: PUBLIC_FILE_MODE, ...kept[1] },
      { path: chainPath, data: normalizePem(material.chainPem), mode: PUBLIC_FILE_MODE, ...kept[2] },
    ],
    { force: options.force, currentSetIsWhole: () => serverDirIsWhole(keyPath, certPath, chainPath) },
  );
  return { keyPath, certPath, chainPath };
}

/** The key, certificate and chain in place belong together: the key is the certificate's, the chain starts with it. */
async function serverDirIsWhole(keyPath: string, certPath: string, chainPath: string): Promise<boolean> {
  const [keyPem, certPem, chainPem] = await Promise.all([keyPath, certPath, chainPath].map((p) => readFile(p, 'utf8')));
  const cert = readCertificate(certPem!, certPath);
  const [first] = splitPemBlocks(chainPem!, 'CERTIFICATE');
  return cert.pairsWith(parsePrivateKey(keyPem!, keyPath)) && first === splitPemBlocks(certPem!, 'CERTIFICATE')[0];
}
