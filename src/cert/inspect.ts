import { X509Certificate, createHash } from 'node:crypto';
import type Forge from 'node-forge';
import { usageError } from '../util/errors.js';
import { parsePemBlocks } from './pem.js';
import { KEY_USAGES } from './profiles.js';
import { asn1Parts, readExtensions, type CertificateExtension } from './extensions.js';

/** What a person or a check needs to know about a certificate. */
export interface CertInfo {
  /** One line, in certificate order: `CN=depot.lab.local, O=Lab`. */
  subject: string;
  issuer: string;
  /** The subject's (last) common name, if any. */
  commonName?: string;
  san: { dns: string[]; ips: string[] };
  notBefore: Date;
  notAfter: Date;
  /** Lowercase hex, as the certificate stores it. */
  serial: string;
  /** X.509 version number (3 for v3). */
  version: number;
  fingerprints: {
    /** `AB:CD:...`, as openssl and browsers show it. */
    sha256: string;
    /** 64 lowercase hex digits, as the installer's trusted-certificate alias uses it. */
    sha256Hex: string;
    sha1: string;
    sha1Hex: string;
  };
  key: { type: string; bits: number; curve?: string };
  /** Names such as digitalSignature, keyEncipherment, keyCertSign; empty when the extension is absent. */
  keyUsage: string[];
  /** Names such as serverAuth (OIDs when unknown); empty when the extension is absent. */
  extKeyUsage: string[];
  isCa: boolean;
  pathLen?: number;
  selfSigned: boolean;
  /** Extension names (or OIDs) present, with their criticality. */
  extensions: Array<{ name: string; critical: boolean }>;
  signatureAlgorithm: string;
}

const CURVE_BITS: Record<string, number> = { prime256v1: 256, secp256r1: 256, secp384r1: 384, secp521r1: 521 };

/** Parses the first CERTIFICATE block of `pem`; `source` names it in the error. */
export function parseCertificate(pem: string, source = 'The certificate'): X509Certificate {
  const block = parsePemBlocks(pem, source).find((b) => b.label === 'CERTIFICATE');
  if (!block) throw usageError(`${source} holds no CERTIFICATE PEM block.`);
  try {
    return new X509Certificate(block.der);
  } catch {
    throw usageError(`${source} is not a readable X.509 certificate.`);
  }
}

/** SHA-256 of the certificate's DER, 64 lowercase hex digits. */
export function sha256Fingerprint(pem: string): string {
  return createHash('sha256').update(parseCertificate(pem).raw).digest('hex');
}

function colonHex(hex: string): string {
  return hex.toUpperCase().match(/../g)!.join(':');
}

/** Node prints names one attribute a line; one line reads better in a report. */
function oneLine(name: string): string {
  return name.split('\n').filter(Boolean).join(', ');
}

interface TbsDetails {
  version: number;
  signatureOid: string;
  extensions: CertificateExtension[];
}

/** The parts node:crypto does not expose, read from the DER with forge's ASN.1 (works for any key type). */
function tbsDetails(der: Buffer): TbsDetails {
  const { asn1 } = asn1Parts();
  const cert = asn1.fromDer(der.toString('binary'));
  const [tbs, sigAlg] = cert.value as Forge.asn1.Asn1[];
  const fields = tbs!.value as Forge.asn1.Asn1[];
  const ctx = (n: number) => fields.find((f) => f.tagClass === asn1.Class.CONTEXT_SPECIFIC && f.type === n);
  const versionField = ctx(0);
  const version = versionField ? asn1.derToInteger((versionField.value as Forge.asn1.Asn1[])[0]!.value as string) + 1 : 1;
  const exts = ctx(3);
  const oid = asn1.derToOid((sigAlg!.value as Forge.asn1.Asn1[])[0]!.value as string);
  return { version, signatureOid: oid, extensions: exts ? readExtensions(exts) : [] };
}

function oidName(oid: string): string {
  return asn1Parts().oids[oid] ?? oid;
}

export function inspectCertificate(pem: string, source = 'The certificate'): CertInfo {
  const x509 = parseCertificate(pem, source);
  let details: TbsDetails;
  try {
    details = tbsDetails(x509.raw);
  } catch {
    throw usageError(`${source} has extensions depotkit cannot read.`);
  }
  const ext = (name: string) => details.extensions.find((e) => e.name === name);
  const san = { dns: [] as string[], ips: [] as string[] };
  for (const alt of (ext('subjectAltName')?.altNames as Array<{ type: number; value: string; ip?: string }> | undefined) ?? []) {
    if (alt.type === 2) san.dns.push(alt.value);
    else if (alt.type === 7 && alt.ip) san.ips.push(alt.ip);
  }
  const ku = ext('keyUsage');
  const eku = ext('extKeyUsage');
  const bc = ext('basicConstraints');
  const sha256Hex = createHash('sha256').update(x509.raw).digest('hex');
  const sha1Hex = createHash('sha1').update(x509.raw).digest('hex');
  const pub = x509.publicKey;
  const curve = pub.asymmetricKeyDetails?.namedCurve;
  const subjectLines = x509.subject.split('\n');
  const cn = subjectLines
    .filter((l) => l.startsWith('CN='))
    .pop()
    ?.slice(3);
  return {
    subject: oneLine(x509.subject),
    issuer: oneLine(x509.issuer),
    ...(cn !== undefined ? { commonName: cn } : {}),
    san,
    notBefore: new Date(x509.validFrom),
    notAfter: new Date(x509.validTo),
    serial: x509.serialNumber.toLowerCase(),
    version: details.version,
    fingerprints: { sha256: colonHex(sha256Hex), sha256Hex, sha1: colonHex(sha1Hex), sha1Hex },
    key: {
      type: pub.asymmetricKeyType ?? 'unknown',
      bits: pub.asymmetricKeyDetails?.modulusLength ?? (curve ? (CURVE_BITS[curve] ?? 0) : 0),
      ...(curve ? { curve } : {}),
    },
    keyUsage: ku ? KEY_USAGES.filter((bit) => ku[bit] === true) : [],
    extKeyUsage: eku ? (asn1Parts().asn1.fromDer(eku.value).value as Forge.asn1.Asn1[]).map((o) => oidName(asn1Parts().asn1.derToOid(o.value as string))) : [],
    isCa: bc?.cA === true,
    ...(typeof bc?.pathLenConstraint === 'number' ? { pathLen: bc.pathLenConstraint } : {}),
    selfSigned: x509.subject === x509.issuer && x509.verify(pub),
    extensions: details.extensions.map((e) => ({ name: e.name ?? e.id, critical: e.critical === true })),
    signatureAlgorithm: oidName(details.signatureOid),
  };
}
