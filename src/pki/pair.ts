/**
 * A certificate file and a key file given the wrong way round: what OpenSSL
 * reports only as "no start line". Seen from the PEM labels alone, before
 * anything is parsed.
 */
const CERT_LABEL = /-----BEGIN CERTIFICATE-----/;
const KEY_LABEL = /-----BEGIN (?:RSA |EC |ENCRYPTED )?PRIVATE KEY-----/;

export function isSwappedPair(certText: string, keyText: string): boolean {
  return !CERT_LABEL.test(certText) && KEY_LABEL.test(certText) && CERT_LABEL.test(keyText) && !KEY_LABEL.test(keyText);
}

/** The sentence for a swapped pair, naming the two files (or the options). */
export function swappedPairMessage(cert: string, key: string): string {
  return `The certificate and the key are swapped: ${cert} holds a private key and ${key} a certificate; give them the other way round.`;
}
