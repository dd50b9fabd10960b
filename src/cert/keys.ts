import { createPrivateKey, createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import type Forge from 'node-forge';
import { forge } from './forge.js';
import { usageError } from '../util/errors.js';
import { MIN_PASSPHRASE_LENGTH } from '../util/limits.js';
import { PRIVATE_KEY_LABELS, parsePemBlocks } from './pem.js';

const generateKeyPairAsync = promisify(generateKeyPair);

import { RSA_KEY_SIZES, type RsaKeySize } from './profiles.js';

export { RSA_KEY_SIZES, type RsaKeySize };

export function assertKeySize(bits: number): asserts bits is RsaKeySize {
  if (!(RSA_KEY_SIZES as readonly number[]).includes(bits)) {
    throw usageError(`The key size must be one of ${RSA_KEY_SIZES.join(', ')} bits, not ${bits}.`);
  }
}

/** Where new RSA keys come from: `bits` in, unencrypted PKCS#8 PEM out. */
export type KeySource = (bits: RsaKeySize) => Promise<string>;

const freshKeys: KeySource = async (bits) => {
  const { privateKey } = await generateKeyPairAsync('rsa', {
    modulusLength: bits,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return privateKey;
};

let keySource: KeySource = freshKeys;

/**
 * Replaces where generateKeyPem takes keys from, for a program that embeds the library and makes its keys
 * elsewhere; `undefined` puts node:crypto back. The CLI never calls it. (The test suite hands out keys it
 * generated once: generating a key per certificate was a fifth of its CPU.)
 */
export function useKeySource(source: KeySource | undefined): void {
  keySource = source ?? freshKeys;
}

/**
 * A new RSA private key as unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`),
 * generated natively by node:crypto off the main thread (unless useKeySource said otherwise).
 */
export async function generateKeyPem(bits: number): Promise<string> {
  assertKeySize(bits);
  return keySource(bits);
}

/**
 * Parses an RSA private key (PKCS#8 or PKCS#1 PEM), decrypting it with
 * `passphrase` when it is encrypted. A missing or wrong passphrase, a non-RSA
 * key or damaged text each get one sentence naming `source`.
 */
export function parsePrivateKey(pem: string, source = 'The private key', passphrase?: string): KeyObject {
  const block = parsePemBlocks(pem, source).find((b) => PRIVATE_KEY_LABELS.includes(b.label));
  if (!block) throw usageError(`${source} holds no private key PEM block.`);
  const encrypted = block.label === 'ENCRYPTED PRIVATE KEY' || block.headers.some((h) => /^Proc-Type:.*ENCRYPTED/i.test(h));
  if (encrypted && passphrase === undefined) {
    throw usageError(
      `${source} is encrypted and no passphrase was given.`,
      'Give its passphrase (for a CA key: `caPassphraseFile` FILE or `caPassphraseEnv` NAME), or decrypt a copy with openssl pkey and keep it mode 0600.',
    );
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: block.pem, format: 'pem', ...(encrypted ? { passphrase } : {}) });
  } catch {
    throw usageError(encrypted ? `${source} cannot be decrypted with the given passphrase.` : `${source} is not a readable private key.`);
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw usageError(`${source} is a ${key.asymmetricKeyType ?? 'unknown'} key; depotkit signs with RSA keys only.`);
  }
  return key;
}

/**
 * Refuses a passphrase too short to protect a CA key: whoever copies the
 * encrypted key may try passphrases offline, as fast as they like. Only new
 * keys are held to it; a key encrypted elsewhere is still read with its own.
 */
export function assertNewPassphrase(passphrase: string): void {
  if (passphrase === '') throw usageError('The passphrase must not be empty.');
  if ([...passphrase].length < MIN_PASSPHRASE_LENGTH) {
    throw usageError(`The passphrase has ${[...passphrase].length} characters; a CA key's passphrase needs at least ${MIN_PASSPHRASE_LENGTH}.`);
  }
}

/** The key as PKCS#8 PEM, encrypted with AES-256-CBC under `passphrase` (openssl reads it with -passin). */
export function encryptKeyPem(key: KeyObject, passphrase: string): string {
  assertNewPassphrase(passphrase);
  return key.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase }).toString();
}

/** The public half of `key` as a node-forge key, which forge needs to build certificates. */
export function forgePublicKey(key: KeyObject): Forge.pki.rsa.PublicKey {
  const spki = createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString();
  return forge.pki.publicKeyFromPem(spki) as Forge.pki.rsa.PublicKey;
}

export function rsaBits(key: KeyObject): number {
  return key.asymmetricKeyDetails?.modulusLength ?? 0;
}
