/**
 * Deliberately broken certificates for tests, built with node-forge directly
 * (not with src/pki), so that a bug in the toolkit cannot hide a bug in a test.
 * Each one is wrong in exactly one way; everything else is a proper server
 * certificate issued by `ca`.
 */
import { pooledKeyPem } from './key-pool.js';
import { isIP } from 'node:net';
import forge from 'node-forge';

export interface CaPair {
  keyPem: string;
  certPem: string;
}

export type BrokenKind = 'no-san' | 'ip-cn' | 'expired' | 'wrong-host' | 'self-signed';

const DAY = 86_400_000;

/** A key from the suite's pool (test/helpers/key-pool.ts), as PEM and as node-forge's private and public keys. */
export function newKey(bits = 2048): { keyPem: string; key: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey } {
  const keyPem = pooledKeyPem(bits);
  const key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  return { keyPem, key, publicKey: forge.pki.setRsaPublicKey(key.n, key.e) as forge.pki.rsa.PublicKey };
}

function serial(): string {
  return `4${forge.util.bytesToHex(forge.random.getBytesSync(16)).slice(1)}`;
}

function altNames(host: string): Array<{ type: number; value?: string; ip?: string }> {
  return isIP(host) ? [{ type: 7, ip: host }] : [{ type: 2, value: host }];
}

/** A server certificate for `host` issued by `ca`, broken as `kind` says. */
export function brokenServerCert(ca: CaPair, kind: BrokenKind, host: string): { keyPem: string; certPem: string } {
  const { keyPem, key, publicKey } = newKey();
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  const cert = forge.pki.createCertificate();
  cert.serialNumber = serial();
  cert.publicKey = publicKey;
  const now = Date.now();
  cert.validity.notBefore = new Date(now - DAY);
  cert.validity.notAfter = new Date(now + 90 * DAY);
  let cn = host;
  let sans = altNames(host);
  switch (kind) {
    case 'no-san':
      sans = [];
      break;
    case 'ip-cn':
      cn = isIP(host) ? host : '127.0.0.1';
      sans = [...altNames(host), { type: 7, ip: cn }];
      break;
    case 'expired':
      cert.validity.notBefore = new Date(now - 100 * DAY);
      cert.validity.notAfter = new Date(now - DAY);
      break;
    case 'wrong-host':
      cn = 'wrong-host.invalid';
      sans = altNames(cn);
      break;
    case 'self-signed':
      break;
  }
  const selfSigned = kind === 'self-signed';
  cert.setSubject([{ shortName: 'CN', value: cn }]);
  cert.setIssuer(selfSigned ? [{ shortName: 'CN', value: cn }] : caCert.subject.attributes);
  const issuerKeyId = selfSigned ? cert.generateSubjectKeyIdentifier().getBytes() : caCert.generateSubjectKeyIdentifier().getBytes();
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: issuerKeyId },
    ...(sans.length > 0 ? [{ name: 'subjectAltName', altNames: sans }] : []),
  ]);
  cert.sign(selfSigned ? key : caKey, forge.md.sha256.create());
  return { keyPem, certPem: forge.pki.certificateToPem(cert).replace(/\r\n/g, '\n') };
}

/**
 * A CA certificate with a chosen validity window, or a certificate that only
 * pretends to be a CA (`isCa: false`): for the CA-loading error paths.
 */
export function customCa(opts: { cn?: string; notBefore?: Date; notAfter?: Date; isCa?: boolean } = {}): CaPair {
  const { keyPem, key, publicKey } = newKey();
  const cert = forge.pki.createCertificate();
  cert.serialNumber = serial();
  cert.publicKey = publicKey;
  cert.validity.notBefore = opts.notBefore ?? new Date(Date.now() - DAY);
  cert.validity.notAfter = opts.notAfter ?? new Date(Date.now() + 365 * DAY);
  const name = [{ shortName: 'CN', value: opts.cn ?? 'test CA' }];
  cert.setSubject(name);
  cert.setIssuer(name);
  const isCa = opts.isCa ?? true;
  cert.setExtensions([
    { name: 'basicConstraints', cA: isCa, ...(isCa ? { pathLenConstraint: 0 } : {}), critical: true },
    { name: 'keyUsage', ...(isCa ? { keyCertSign: true, cRLSign: true } : { digitalSignature: true }), critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(key, forge.md.sha256.create());
  return { keyPem, certPem: forge.pki.certificateToPem(cert).replace(/\r\n/g, '\n') };
}
