import { join } from 'node:path';
import forge from 'node-forge';
import { SERVER_CERT_DEFAULT_DAYS } from '../constants.js';
import { usageError } from '../util/errors.js';
import { writeFileAtomic } from '../util/fs.js';
import { BACKDATE_MS, openCa, refuseExisting, type CaMaterial, type CaSigner } from './ca.js';
import { PRIVATE_KEY_MODE, PUBLIC_FILE_MODE, SERVER_CERT_FILE, SERVER_CHAIN_FILE, SERVER_KEY_FILE } from './files.js';
import { forgePublicKey, generateKeyPem, parsePrivateKey } from './keys.js';
import { normalizePem } from './pem.js';
import { copyName, issuerKeyId, nameAttributes, normalizeDnsNames, normalizeIps, randomSerialHex, serverExtensions, setValidity, signCertificate, validityPeriod, type AltNames } from './x509.js';

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
}

/**
 * A new key and server certificate signed by `ca`: CN = the first DNS name,
 * SAN = every DNS name and IP, the server profile, 825 days by default
 * (capped at the CA's own end of validity).
 */
export async function issueServerCert(ca: CaMaterial, opts: IssueOptions): Promise<ServerMaterial> {
  const names: AltNames = { dns: normalizeDnsNames(opts.dns), ips: normalizeIps(opts.ips ?? []) };
  if (names.dns.length === 0 && names.ips.length === 0) throw usageError('A server certificate needs at least one DNS name (--dns).');
  if (names.dns.length === 0 && !opts.allowIpOnly) {
    throw usageError(
      'Refusing an IP-only certificate: its CN would be an IP address, which the installer rejects.',
      'Give the depot a DNS name with --dns (add it to the installer\'s hosts file when there is no DNS), or pass --allow-ip-only.',
    );
  }
  const signer = openCa(ca);
  const days = opts.days ?? SERVER_CERT_DEFAULT_DAYS;
  const notBefore = opts.notBefore ?? new Date(Date.now() - BACKDATE_MS);
  // Checked before the key is made: a bad --days fails at once.
  validityPeriod(notBefore, days);
  const keyPem = await generateKeyPem(opts.keySize ?? 2048);
  const certPem = buildServerCertificate(signer, {
    subject: nameAttributes([['CN', names.dns[0] ?? names.ips[0]]]),
    names,
    publicKey: forgePublicKey(parsePrivateKey(keyPem)),
    days,
    notBefore,
  });
  return { keyPem, certPem, chainPem: certPem + signer.certPem };
}

/** Signs a leaf with the server profile; shared by issue and CSR signing. */
export function buildServerCertificate(
  signer: CaSigner,
  spec: { subject: forge.pki.CertificateField[]; names: AltNames; publicKey: forge.pki.PublicKey; days: number; notBefore?: Date },
): string {
  const cert = forge.pki.createCertificate();
  cert.serialNumber = randomSerialHex();
  setValidity(cert, spec.notBefore ?? new Date(Date.now() - BACKDATE_MS), spec.days);
  // A certificate cannot be trusted past its CA's end, so it is not made to claim more.
  if (cert.validity.notAfter > signer.cert.validity.notAfter) cert.validity.notAfter = signer.cert.validity.notAfter;
  cert.setSubject(spec.subject);
  cert.setIssuer(copyName(signer.cert.subject.attributes));
  cert.publicKey = spec.publicKey;
  cert.setExtensions(serverExtensions(spec.names, issuerKeyId(signer.cert), spec.subject.length === 0));
  signCertificate(cert, signer.key);
  return normalizePem(forge.pki.certificateToPem(cert));
}

/** Writes a server folder: key 0600, certificate and chain 0644; nothing is replaced without `force`. */
export async function writeServerDir(
  dir: string,
  material: ServerMaterial,
  options: { force?: boolean } = {},
): Promise<{ keyPath: string; certPath: string; chainPath: string }> {
  const keyPath = join(dir, SERVER_KEY_FILE);
  const certPath = join(dir, SERVER_CERT_FILE);
  const chainPath = join(dir, SERVER_CHAIN_FILE);
  await refuseExisting([keyPath, certPath, chainPath], options.force);
  await writeFileAtomic(keyPath, normalizePem(material.keyPem), { mode: PRIVATE_KEY_MODE, force: options.force });
  await writeFileAtomic(certPath, normalizePem(material.certPem), { mode: PUBLIC_FILE_MODE, force: options.force });
  await writeFileAtomic(chainPath, normalizePem(material.chainPem), { mode: PUBLIC_FILE_MODE, force: options.force });
  return { keyPath, certPath, chainPath };
}
