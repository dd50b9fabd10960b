import { readFile } from 'node:fs/promises';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { SERVE_TLS_CIPHERS, SERVE_TLS_MIN_VERSION } from '../constants.js';
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

export async function loadTlsMaterial(source: TlsSource): Promise<TlsMaterial> {
  if ('certPem' in source) return { certPem: source.certPem, keyPem: source.keyPem };
  return { certPem: await readPem(source.certFile), keyPem: await readPem(source.keyFile) };
}

/** TLS 1.2 minimum, TLS 1.3 on, AEAD suites only, the server's order of preference. */
export function secureOptions(material: TlsMaterial): SecureContextOptions {
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
