import { X509Certificate, createHash, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { usageError } from '../util/errors.js';
import { TAG, booleanOf, children, derNode, oidOf, smallInteger, type DerNode } from './der.js';
import { bareHost } from '../util/url.js';
import { oidName } from './oid-names.js';
import { parsePemBlocks } from './pem.js';
import { KEY_USAGES } from './profiles.js';

// Only node:crypto and a DER reader here, never node-forge (about 8 MB and 70 ms of CPU to load): the serving
// process, check and `cert inspect` read certificates at every run and build none.

/** A fingerprint of a certificate's DER as depotkit shows it everywhere: `AB:CD:...`, as openssl and browsers print it. */
function fingerprintOf(algorithm: 'sha256' | 'sha1', der: Uint8Array): string {
  return createHash(algorithm).update(der).digest('hex').toUpperCase().match(/../g)!.join(':');
}

/** Node prints names one attribute a line; one line reads better. */
function oneLine(name: string): string {
  return name.split('\n').filter(Boolean).join(', ');
}

/** An IP address as people write it: IPv6 compressed, lower case (RFC 5952, as URLs spell it). */
function ipText(bytes: Buffer): string | undefined {
  if (bytes.length === 4) return [...bytes].join('.');
  if (bytes.length !== 16) return undefined;
  const groups = Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16));
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}

interface Extension {
  oid: string;
  critical: boolean;
  value: DerNode;
}

/** What node:crypto does not show, read from the DER: the version, the signature algorithm, the extensions. */
function tbsParts(der: Buffer): { version: number; signatureOid: string; extensions: Extension[] } {
  const [tbs, algorithm] = children(derNode(der));
  const fields = children(tbs!);
  const tagged = (n: number) => fields.find((f) => f.tag === 0xa0 + n);
  const version = tagged(0) ? smallInteger(children(tagged(0)!)[0]!) + 1 : 1;
  const extensions = tagged(3)
    ? children(children(tagged(3)!)[0]!).map((ext) => {
        // extnID, critical BOOLEAN DEFAULT FALSE, extnValue OCTET STRING
        const [id, second, third] = children(ext);
        const flagged = second!.tag === TAG.BOOLEAN;
        const octets = flagged ? third! : second!;
        if (octets.tag !== TAG.OCTET_STRING) throw new Error('not an extension');
        return { oid: oidOf(id!), critical: flagged && booleanOf(second!), value: derNode(octets.body) };
      })
    : [];
  return { version, signatureOid: oidOf(children(algorithm!)[0]!), extensions };
}

function keyUsageOf(ext: Extension | undefined): string[] {
  if (!ext || ext.value.tag !== TAG.BIT_STRING) return [];
  // The first byte counts the unused bits, which are zero anyway.
  const [, first = 0, second = 0] = ext.value.body;
  return KEY_USAGES.filter((_, i) => (i < 8 ? first & (0x80 >> i) : second & 0x80));
}

function basicConstraintsOf(ext: Extension | undefined): { isCa: boolean; pathLen?: number } {
  if (!ext) return { isCa: false };
  const fields = children(ext.value);
  const isCa = fields[0]?.tag === TAG.BOOLEAN && booleanOf(fields[0]);
  const pathLen = fields.find((f) => f.tag === TAG.INTEGER);
  return { isCa, ...(pathLen ? { pathLen: smallInteger(pathLen) } : {}) };
}

function subjectAltNamesOf(ext: Extension | undefined): { dns: string[]; ips: string[] } {
  const san = { dns: [] as string[], ips: [] as string[] };
  for (const name of ext ? children(ext.value) : []) {
    // GeneralName [2] dNSName IA5String, [7] iPAddress OCTET STRING
    if (name.tag === 0x82) san.dns.push(name.body.toString('latin1'));
    const ip = name.tag === 0x87 ? ipText(name.body) : undefined;
    if (ip) san.ips.push(ip);
  }
  return san;
}

const CURVE_BITS: Record<string, number> = { prime256v1: 256, secp256r1: 256, secp384r1: 384, secp521r1: 521 };

/**
 * A certificate as depotkit reads it, one model for every use (in the manner of smallstep's single certificate
 * type): its facts for reports and checks, its fingerprints in the one spelling, and what only its bytes can
 * answer (who issued it, whether a key is its own, whether it names a host). As JSON it is `cert inspect`'s.
 */
export class Certificate {
  /** One line, in certificate order: `CN=depot.lab.local, O=Lab`. */
  readonly subject: string;
  readonly issuer: string;
  /** The subject's (last) common name, if any. */
  readonly commonName?: string;
  /** The subject alternative names, DNS names and IP addresses (IPv6 compressed), in certificate order. */
  readonly san: { dns: string[]; ips: string[] };
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** Upper-case hex, as openssl and node:crypto show it. */
  readonly serial: string;
  /** X.509 version number (3 for v3). */
  readonly version: number;
  /** Of the DER, spelt `AB:CD:...` as openssl and browsers print them; SHA-1 is what vCenter calls a thumbprint. */
  readonly fingerprints: { sha256: string; sha1: string };
  readonly key: { type: string; bits: number; curve?: string };
  /** Names such as digitalSignature, keyEncipherment, keyCertSign; empty when the extension is absent. */
  readonly keyUsage: string[];
  /** Names such as serverAuth (OIDs when unknown); empty when the extension is absent. */
  readonly extKeyUsage: string[];
  /** basicConstraints CA:TRUE. */
  readonly isCa: boolean;
  readonly pathLen?: number;
  /** Issued by its own subject and signed by its own key. */
  readonly selfSigned: boolean;
  /** Extension names (or OIDs) present, with their criticality. */
  readonly extensions: Array<{ name: string; critical: boolean }>;
  readonly signatureAlgorithm: string;
  readonly #x509: X509Certificate;

  /** Throws when the DER holds parts depotkit cannot read (node:crypto having read the rest). */
  constructor(x509: X509Certificate) {
    this.#x509 = x509;
    const parts = tbsParts(x509.raw);
    const ext = (name: string) => parts.extensions.find((e) => oidName(e.oid) === name);
    const commonName = x509.subject
      .split('\n')
      .filter((l) => l.startsWith('CN='))
      .pop()
      ?.slice(3);
    const pub = x509.publicKey;
    const curve = pub.asymmetricKeyDetails?.namedCurve;
    const constraints = basicConstraintsOf(ext('basicConstraints'));
    this.subject = oneLine(x509.subject);
    this.issuer = oneLine(x509.issuer);
    if (commonName !== undefined) this.commonName = commonName;
    this.san = subjectAltNamesOf(ext('subjectAltName'));
    this.notBefore = new Date(x509.validFrom);
    this.notAfter = new Date(x509.validTo);
    this.serial = x509.serialNumber.toUpperCase();
    this.version = parts.version;
    this.fingerprints = { sha256: fingerprintOf('sha256', x509.raw), sha1: fingerprintOf('sha1', x509.raw) };
    this.key = {
      type: pub.asymmetricKeyType ?? 'unknown',
      bits: pub.asymmetricKeyDetails?.modulusLength ?? (curve ? (CURVE_BITS[curve] ?? 0) : 0),
      ...(curve ? { curve } : {}),
    };
    this.keyUsage = keyUsageOf(ext('keyUsage'));
    const eku = ext('extKeyUsage');
    this.extKeyUsage = eku ? children(eku.value).map((o) => oidName(oidOf(o))) : [];
    this.isCa = constraints.isCa;
    if (constraints.pathLen !== undefined) this.pathLen = constraints.pathLen;
    this.selfSigned = x509.subject === x509.issuer && x509.verify(pub);
    this.extensions = parts.extensions.map((e) => ({ name: oidName(e.oid), critical: e.critical }));
    this.signatureAlgorithm = oidName(parts.signatureOid);
  }

  /** The DER bytes. */
  get der(): Buffer {
    return this.#x509.raw;
  }

  /** Canonical PEM (LF line ends, final newline). */
  get pem(): string {
    return `${this.#x509.toString().trim()}\n`;
  }

  get publicKey(): KeyObject {
    return this.#x509.publicKey;
  }

  /** Whether this is a CA that `child` names as its issuer (subject and key id) and whose key verifies `child`'s signature. */
  issued(child: Certificate): boolean {
    return this.#x509.ca && child.#x509.checkIssued(this.#x509) && child.#x509.verify(this.#x509.publicKey);
  }

  /** Whether `key` (a private key) is this certificate's. */
  pairsWith(key: KeyObject): boolean {
    return this.#x509.checkPrivateKey(key);
  }

  /**
   * Does the SAN name `host`? With Node's (OpenSSL's X509_check_host) semantics and never the subject's CN, as
   * the installer's strict check: a wildcard only in the leftmost label, with at least two labels after it
   * (`*.local` and `*.com` match nothing), an IP only by an IP entry, case and a trailing dot on the host ignored.
   */
  coversHost(host: string): boolean {
    const bare = bareHost(host);
    if (isIP(bare)) return this.#x509.checkIP(bare) !== undefined;
    const name = bare.replace(/\.$/, '');
    return name !== '' && this.#x509.checkHost(name, { subject: 'never' }) !== undefined;
  }
}

/** Reads DER, or the first CERTIFICATE block of PEM text; throws one sentence naming `source`. */
function x509Of(input: string | Uint8Array, source: string): X509Certificate {
  let der: Uint8Array = input as Uint8Array;
  if (typeof input === 'string') {
    const block = parsePemBlocks(input, source).find((b) => b.label === 'CERTIFICATE');
    if (!block) throw usageError(`${source} holds no CERTIFICATE PEM block.`);
    der = block.der;
  }
  try {
    return new X509Certificate(der);
  } catch {
    throw usageError(`${source} is not a readable X.509 certificate.`);
  }
}

/**
 * The certificate in `input`: DER bytes (a TLS peer's `raw`), or PEM text, of which the first certificate counts
 * (a chain reads as its leaf). Throws one sentence naming `source` when there is none or it cannot be read.
 */
export function readCertificate(input: string | Uint8Array, source = 'The certificate'): Certificate {
  const x509 = x509Of(input, source);
  try {
    return new Certificate(x509);
  } catch {
    throw usageError(`${source} has extensions depotkit cannot read.`);
  }
}

/**
 * Every certificate of a chain or bundle, in order, with `undefined` for a block that cannot be read; empty when
 * the text is not PEM. For what shows certificates and must not fail.
 */
export function readCertificates(text: string): (Certificate | undefined)[] {
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
        return readCertificate(b.der);
      } catch {
        return undefined;
      }
    });
}

/**
 * Fingerprints by PEM text, each text read once: a fleet's consumers list back the same certificates in the same
 * text, and reading them again for each consumer was a third of a 200-consumer push's CPU.
 */
const byPem = new Map<string, string>();
const MAX_REMEMBERED = 1024;

/**
 * The SHA-256 fingerprint of a certificate (its DER), in the one spelling depotkit shows and compares: `AB:CD:...`.
 * Takes the certificate read, its DER, or PEM text (the first certificate); throws on text that holds none.
 */
export function sha256Fingerprint(cert: Certificate | Uint8Array | string): string {
  if (cert instanceof Certificate) return cert.fingerprints.sha256;
  if (typeof cert !== 'string') return fingerprintOf('sha256', cert);
  let known = byPem.get(cert);
  if (known === undefined) {
    known = fingerprintOf('sha256', x509Of(cert, 'The certificate').raw);
    if (byPem.size >= MAX_REMEMBERED) byPem.clear();
    byPem.set(cert, known);
  }
  return known;
}

/**
 * The items of a list (a consumer's trusted certificates, a server's chains) that hold the certificate with this
 * fingerprint, found by certificate, never by name or alias; `pemOf` gives an item's PEM text. An item whose text
 * is not a readable certificate matches nothing.
 */
export function findByFingerprint<T>(items: readonly T[], sha256: string | undefined, pemOf: (item: T) => unknown = (item) => item): T[] {
  if (sha256 === undefined) return [];
  return items.filter((item) => {
    const pem = pemOf(item);
    if (typeof pem !== 'string') return false;
    try {
      return sha256Fingerprint(pem) === sha256;
    } catch {
      return false;
    }
  });
}

/** Whether the SAN of `cert` (PEM text or read) names `host`; see {@link Certificate.coversHost}. */
export function certificateCoversHost(cert: string | Certificate, host: string): boolean {
  return (typeof cert === 'string' ? readCertificate(cert) : cert).coversHost(host);
}

const DAY_MS = 86_400_000;

/** Whole days from `now` until the certificate expires; negative once it has. */
export function daysLeft(cert: Pick<Certificate, 'notAfter'>, now: Date = new Date()): number {
  return Math.floor((cert.notAfter.getTime() - now.getTime()) / DAY_MS);
}
