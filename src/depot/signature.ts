import { createHash, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeFsError, usageError } from '../util/errors.js';
import { exists, writeFileAtomic } from '../util/fs.js';
import { describeSchemaErrors } from '../util/schema.js';
import { SIGNATURE_FORMAT } from './schemas.js';
import { validateSignature } from './validators.js';

/**
 * The toolkit's own catalog signature, for depots it makes up (never for a
 * vendor catalog, whose .sig is copied byte for byte). Format: docs/signature.md.
 * The signature is ECDSA P-256 over SHA-256 of the catalog's exact bytes, DER
 * encoded, so `openssl dgst -sha256 -verify` checks it with the public key alone.
 */
export interface SignatureFile {
  format: typeof SIGNATURE_FORMAT;
  version: 1;
  algorithm: 'ECDSA-P256-SHA256';
  catalogSha256: string;
  signerSpkiSha256: string;
  signedAt: string;
  signature: string;
}

export const SIGNING_KEY_FILE = 'signing-key.pem';
export const SIGNING_PUBLIC_FILE = 'signing-public.pem';

export interface SigningKeyPaths {
  keyPath: string;
  publicPath: string;
  created: boolean;
}

/** Loads the signing key in `dir`, or creates one (private key 0600) if there is none. */
export async function ensureSigningKey(dir: string): Promise<SigningKeyPaths & { privateKeyPem: string }> {
  const keyPath = join(dir, SIGNING_KEY_FILE);
  const publicPath = join(dir, SIGNING_PUBLIC_FILE);
  if (await exists(keyPath)) {
    let privateKeyPem: string;
    try {
      privateKeyPem = await readFile(keyPath, 'utf8');
    } catch (err) {
      throw describeFsError(err, keyPath);
    }
    if (!(await exists(publicPath))) {
      await writeFileAtomic(publicPath, createPublicKey(privateKeyPem).export({ type: 'spki', format: 'pem' }) as string);
    }
    return { keyPath, publicPath, created: false, privateKeyPem };
  }
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  await writeFileAtomic(keyPath, privateKeyPem, { mode: 0o600 });
  await writeFileAtomic(publicPath, publicKey.export({ type: 'spki', format: 'pem' }) as string, { force: true });
  return { keyPath, publicPath, created: true, privateKeyPem };
}

function spkiSha256(key: KeyObject): string {
  return createHash('sha256')
    .update(key.export({ type: 'spki', format: 'der' }))
    .digest('hex');
}

export function signCatalog(catalogBytes: Uint8Array, privateKeyPem: string, now = new Date()): SignatureFile {
  const publicKey = createPublicKey(privateKeyPem);
  return {
    format: SIGNATURE_FORMAT,
    version: 1,
    algorithm: 'ECDSA-P256-SHA256',
    catalogSha256: createHash('sha256').update(catalogBytes).digest('hex'),
    signerSpkiSha256: spkiSha256(publicKey),
    signedAt: now.toISOString(),
    signature: sign('sha256', catalogBytes, privateKeyPem).toString('base64'),
  };
}

export type SignatureVerdict =
  | { status: 'valid'; signerSpkiSha256: string }
  | { status: 'invalid'; reason: string }
  | { status: 'other-signer'; signerSpkiSha256: string; expected: string }
  | { status: 'not-depotkit' };

/** Is `sigText` a toolkit signature at all? A vendor .sig is not, and is left alone. */
export function parseSignatureFile(sigText: string): SignatureFile | undefined {
  let value: unknown;
  try {
    value = JSON.parse(sigText);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || (value as { format?: unknown }).format !== SIGNATURE_FORMAT) return undefined;
  if (!validateSignature(value)) {
    throw usageError(`The catalog signature is malformed: ${describeSchemaErrors(validateSignature.errors)}.`);
  }
  return value as SignatureFile;
}

/**
 * Verifies a toolkit signature with a public key or a certificate (PEM) alone.
 */
export function verifyCatalogSignature(catalogBytes: Uint8Array, sigText: string, signerPem: string): SignatureVerdict {
  const sig = parseSignatureFile(sigText);
  if (!sig) return { status: 'not-depotkit' };
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey(signerPem);
  } catch {
    throw usageError('The signing certificate or public key is not a PEM public key or certificate.');
  }
  const expected = spkiSha256(publicKey);
  if (expected !== sig.signerSpkiSha256) return { status: 'other-signer', signerSpkiSha256: sig.signerSpkiSha256, expected };
  const digest = createHash('sha256').update(catalogBytes).digest('hex');
  if (digest !== sig.catalogSha256) return { status: 'invalid', reason: 'the catalog was changed after it was signed' };
  if (!verify('sha256', catalogBytes, publicKey, Buffer.from(sig.signature, 'base64'))) {
    return { status: 'invalid', reason: 'the signature does not match the catalog' };
  }
  return { status: 'valid', signerSpkiSha256: expected };
}
