import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { SERVE_TLS_CIPHERS, SERVE_TLS_MIN_VERSION } from '../constants.js';
import { readCertificate } from '../cert/certificate.js';
import { isSwappedPair, swappedPairMessage } from '../cert/pair.js';
import { pemLabels, PRIVATE_KEY_LABELS } from '../cert/pem.js';
import { describeFsError, errorMessage, usageError } from '../util/errors.js';

/** The server's certificate (the leaf, best followed by its chain) and key: as PEM text, or files re-read on reload. */
export type TlsSource = { certPem: string; keyPem: string } | { certFile: string; keyFile: string };

export interface TlsMaterial {
  certPem: string;
  keyPem: string;
}

async function readPem(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw describeFsError(err, path);
  }
}

/** Reads (or takes) the certificate and key, and checks them as checkTlsMaterial does, naming the files. */
export async function loadTlsMaterial(source: TlsSource): Promise<TlsMaterial> {
  if ('certPem' in source) return checkTlsMaterial({ certPem: source.certPem, keyPem: source.keyPem });
  const material = { certPem: await readPem(source.certFile), keyPem: await readPem(source.keyFile) };
  return checkTlsMaterial(material, { cert: `The certificate file ${source.certFile}`, key: `The key file ${source.keyFile}` });
}

/**
 * Checks that the certificate text holds a PEM certificate, the key text a PEM private key, and that they
 * are a pair; throws one sentence otherwise. OpenSSL takes an empty certificate and key without a word, and
 * every handshake then fails: a server must never start, nor switch, on them.
 */
export function checkTlsMaterial(material: TlsMaterial, names = { cert: 'The TLS certificate', key: 'The TLS key' }): TlsMaterial {
  const emptiness = (text: string) => (text.trim() === '' ? ' (it is empty)' : '');
  if (isSwappedPair(material.certPem, material.keyPem))
    throw usageError(swappedPairMessage(names.cert.replace(/^The /, 'the '), names.key.replace(/^The /, 'the ')));
  if (!pemLabels(material.certPem).includes('CERTIFICATE'))
    throw usageError(`${names.cert} holds no PEM certificate${emptiness(material.certPem)}; give the server's certificate, best followed by its chain.`);
  if (!pemLabels(material.keyPem).some((label) => PRIVATE_KEY_LABELS.includes(label)))
    throw usageError(`${names.key} holds no PEM private key${emptiness(material.keyPem)}; give the certificate's private key.`);
  // The first certificate of the text: the leaf, its chain after it.
  const cert = readCertificate(material.certPem, names.cert);
  let key: KeyObject;
  try {
    key = createPrivateKey(material.keyPem);
  } catch (err) {
    throw usageError(`${names.key} holds a private key that cannot be read (an encrypted key is not supported): ${errorMessage(err)}.`);
  }
  if (!cert.pairsWith(key))
    throw usageError(
      `${names.key} does not belong to ${names.cert.replace(/^The /, 'the ')}: they are not a pair.`,
      'Give the key that was made with this certificate.',
    );
  return material;
}

/** TLS 1.2 minimum, TLS 1.3 on, AEAD suites only, the server's order of preference. */
export function secureOptions(material: TlsMaterial): SecureContextOptions {
  checkTlsMaterial(material);
  const options: SecureContextOptions = {
    cert: material.certPem,
    key: material.keyPem,
    minVersion: SERVE_TLS_MIN_VERSION,
    ciphers: SERVE_TLS_CIPHERS,
    honorCipherOrder: true,
  };
  try {
    // Fails here, with a sentence, rather than on the first handshake: bad PEM, or a key that is not the certificate's.
    createSecureContext(options);
  } catch (err) {
    const message = errorMessage(err);
    if (/key values mismatch/i.test(message)) throw usageError('The TLS key does not belong to the certificate: they are not a pair.');
    throw usageError(`The TLS certificate or key cannot be used: ${message}.`);
  }
  return options;
}
