import { PRIVATE_KEY_LABELS, pemLabels } from './pem.js';

/**
 * A certificate file and a key file given the wrong way round: what OpenSSL
 * reports only as "no start line". Seen from the PEM labels alone, before
 * anything is parsed.
 */
export function isSwappedPair(certText: string, keyText: string): boolean {
  const holds = (text: string) => {
    const labels = pemLabels(text);
    return { cert: labels.includes('CERTIFICATE'), key: labels.some((l) => PRIVATE_KEY_LABELS.includes(l)) };
  };
  const [cert, key] = [holds(certText), holds(keyText)];
  return !cert.cert && cert.key && key.cert && !key.key;
}

/** The sentence for a swapped pair, naming the two files (or the options). */
export function swappedPairMessage(cert: string, key: string): string {
  return `The certificate and the key are swapped: ${cert} holds a private key and ${key} a certificate; give them the other way round.`;
}
