import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KeyObject } from 'node:crypto';
import type Forge from 'node-forge';
import { forge } from './forge.js';
import { DepotkitError, EXIT, usageError } from '../util/errors.js';
import { PEM_LIMITS } from '../util/limits.js';
import { BACKUP_SUFFIX, exists, makeDir, writeFileSetAtomic } from '../util/fs.js';
import { CA_PROFILE, type CertificateProfile, type RsaKeySize } from './profiles.js';
import { assertCaFolder, CA_CERT_FILE, CA_KEY_FILE, PRIVATE_DIR_MODE, PRIVATE_KEY_MODE, PUBLIC_FILE_MODE } from './files.js';
import { readCertificate } from './certificate.js';
import { assertKeySize, encryptKeyPem, forgePublicKey, generateKeyPem, parsePrivateKey } from './keys.js';
import { normalizePem, readPemFile, splitPemBlocks } from './pem.js';
import {
  assertCommonName,
  forgeCertificate,
  issuerKeyId,
  nameAttributes,
  profileExtensions,
  randomSerialHex,
  signCertificate,
  validityPeriod,
} from './x509.js';

/** A CA's private key and certificate, both PEM. */
export interface CaMaterial {
  keyPem: string;
  certPem: string;
  /** Needed only when `keyPem` is encrypted. */
  passphrase?: string;
}

export { DEFAULT_CA_CN, DEFAULT_CA_DAYS, DEFAULT_CA_KEY_SIZE } from './profiles.js';

/**
 * A new self-signed CA with `profile` (the CA profile by default): its CN,
 * validity and key size unless given.
 */
export async function createCa(opts: { cn?: string; days?: number; keySize?: RsaKeySize; profile?: CertificateProfile } = {}): Promise<CaMaterial> {
  const profile = opts.profile ?? CA_PROFILE;
  const keySize = opts.keySize ?? profile.key.bits;
  assertKeySize(keySize);
  const cn = (opts.cn ?? profile.subject.commonName ?? '').trim();
  if (cn === '') throw usageError('The CA common name must not be empty.');
  assertCommonName(cn, 'The CA common name');
  // Checked before the key is made: a validity that cannot be encoded fails at once.
  const validity = validityPeriod(new Date(Date.now() - profile.validity.backdateMs), opts.days ?? profile.validity.days);
  const keyPem = await generateKeyPem(keySize);
  const key = parsePrivateKey(keyPem);
  const cert = forge.pki.createCertificate();
  cert.serialNumber = randomSerialHex();
  cert.validity.notBefore = validity.notBefore;
  cert.validity.notAfter = validity.notAfter;
  const name = nameAttributes([['CN', cn]]);
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.publicKey = forgePublicKey(key);
  // Its own issuer: the authority key id is its own key id.
  cert.setExtensions(profileExtensions(profile, issuerKeyId(cert)));
  signCertificate(cert, key);
  return { keyPem, certPem: forge.pki.certificateToPem(cert).replace(/\r\n/g, '\n') };
}

/** A CA key and certificate that are not a pair. */
export class KeyMismatchError extends DepotkitError {
  constructor(message: string, fix?: string) {
    super(message, EXIT.usage, fix);
  }
}

/** A CA ready to sign: checked to be a CA, valid now, and holding the matching key. */
export interface CaSigner {
  cert: Forge.pki.Certificate;
  key: KeyObject;
  certPem: string;
}

/**
 * Checks CA material before it signs anything; each problem is one sentence
 * naming the certificate and key (their files, when loaded from a folder).
 */
export function openCa(ca: CaMaterial, names: { cert?: string; key?: string } = {}, now = new Date()): CaSigner {
  const certName = names.cert ?? 'The CA certificate';
  const keyName = names.key ?? 'The CA key';
  const certPem = normalizePem(ca.certPem);
  const info = readCertificate(certPem, certName);
  if (!info.isCa) {
    throw usageError(
      `${certName} (${info.subject}) is not a CA certificate: it lacks basicConstraints CA:TRUE, so it cannot sign certificates.`,
      'Make a CA with: `makeCa`',
    );
  }
  if (info.extensions.some((e) => e.name === 'keyUsage') && !info.keyUsage.includes('keyCertSign')) {
    throw usageError(`${certName} (${info.subject}) is not allowed to sign certificates: its keyUsage lacks keyCertSign.`);
  }
  if (Number.isNaN(info.notAfter.getTime()) || Number.isNaN(info.notBefore.getTime())) {
    // A CA made with too long a validity: its dates cannot be read, so every
    // comparison with them would be false and a leaf would be made already expired.
    throw usageError(
      `${certName} (${info.subject}) has a validity date that cannot be read (openssl shows "Bad time value"), so it cannot sign certificates.`,
      'Make a new CA with `makeCa` and import it into the installer.',
    );
  }
  if (now > info.notAfter) {
    throw usageError(
      `${certName} (${info.subject}) expired on ${info.notAfter.toISOString()}.`,
      'Make a new CA with `makeCa` and import it into the installer.',
    );
  }
  if (now < info.notBefore) {
    throw usageError(`${certName} (${info.subject}) is not valid before ${info.notBefore.toISOString()}; check this machine's clock.`);
  }
  const key = parsePrivateKey(ca.keyPem, keyName, ca.passphrase);
  if (!info.pairsWith(key)) {
    throw new KeyMismatchError(`${keyName} does not belong to ${certName}: they are not a pair.`);
  }
  return { cert: forgeCertificate(certPem, certName), key, certPem: splitPemBlocks(certPem, 'CERTIFICATE')[0]! };
}

/**
 * Reads `<dir>/ca-key.pem` and `<dir>/ca-cert.pem` and checks them as
 * {@link openCa} does; `passphrase` decrypts an encrypted key.
 */
export async function loadCaDir(dir: string, options: { passphrase?: string } = {}): Promise<CaMaterial> {
  await assertCaFolder(dir);
  const certPath = join(dir, CA_CERT_FILE);
  const keyPath = join(dir, CA_KEY_FILE);
  for (const path of [certPath, keyPath]) {
    if (!(await exists(path))) throw usageError(`${path} does not exist; ${dir} is not a CA folder.`, 'Make one with: `makeCa`');
  }
  // The CA and at most its issuers: a file of thousands of certificates is refused at once.
  const [certPem] = await readPemFile(certPath, 'CERTIFICATE', { maxBlocks: PEM_LIMITS.maxChainCertificates, what: 'certificate chain' });
  const [keyPem] = await readPemFile(keyPath, ['PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY', 'ENCRYPTED PRIVATE KEY']);
  const ca: CaMaterial = { keyPem: keyPem!, certPem: certPem!, ...(options.passphrase !== undefined ? { passphrase: options.passphrase } : {}) };
  try {
    openCa(ca, { cert: certPath, key: keyPath });
  } catch (err) {
    // A replacement interrupted between its two files: the previous pair waits as .bak.
    if (err instanceof KeyMismatchError && (await exists(`${keyPath}${BACKUP_SUFFIX}`)) && (await exists(`${certPath}${BACKUP_SUFFIX}`))) {
      throw new KeyMismatchError(
        err.message,
        `A replacement of this CA was interrupted; the previous pair is ${keyPath}${BACKUP_SUFFIX} and ${certPath}${BACKUP_SUFFIX}: move both back to the names without ${BACKUP_SUFFIX}.`,
      );
    }
    throw err;
  }
  return ca;
}

/**
 * Writes a CA folder: the folder 0700 when it is made, the key with mode
 * 0600 (encrypted with `passphrase` when given), the certificate 0644; nothing is replaced without `force`,
 * and a replacement never leaves the new key beside the old certificate: the
 * old pair stays as `.bak` until both new files are in place (see
 * {@link writeFileSetAtomic}).
 */
export async function writeCaDir(
  dir: string,
  ca: CaMaterial,
  options: { force?: boolean; passphrase?: string } = {},
): Promise<{ keyPath: string; certPath: string }> {
  const keyPath = join(dir, CA_KEY_FILE);
  const certPath = join(dir, CA_CERT_FILE);
  if (!options.force) await refuseExisting([keyPath, certPath], false);
  const keyPem =
    options.passphrase !== undefined ? encryptKeyPem(parsePrivateKey(ca.keyPem, 'The CA key', ca.passphrase), options.passphrase) : normalizePem(ca.keyPem);
  await makeDir(dir, PRIVATE_DIR_MODE);
  await writeFileSetAtomic(
    [
      { path: keyPath, data: keyPem, mode: PRIVATE_KEY_MODE },
      { path: certPath, data: normalizePem(ca.certPem), mode: PUBLIC_FILE_MODE },
    ],
    { force: options.force, currentSetIsWhole: () => caDirIsWhole(keyPath, certPath) },
  );
  return { keyPath, certPath };
}

/**
 * Whether the key and certificate in place are a pair. An encrypted key
 * cannot be checked without its passphrase: then the answer is no, and the
 * user decides.
 */
async function caDirIsWhole(keyPath: string, certPath: string): Promise<boolean> {
  const [keyPem, certPem] = await Promise.all([readFile(keyPath, 'utf8'), readFile(certPath, 'utf8')]);
  return readCertificate(certPem, certPath).pairsWith(parsePrivateKey(keyPem, keyPath));
}

/** Checks every target first, so that a refusal leaves no half-written folder. */
export async function refuseExisting(paths: string[], force: boolean | undefined): Promise<void> {
  if (force) return;
  for (const path of paths) {
    if (await exists(path)) throw usageError(`${path} already exists.`, 'Use `force` to replace it.');
  }
}
