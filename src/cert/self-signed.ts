import { isIP } from 'node:net';
import { createCa } from './ca.js';
import { generateCsr, signCsr } from './csr.js';
import { SERVER_PROFILE } from './profiles.js';

/**
 * A self-signed server certificate (subject = issuer, signed by its own key),
 * as a freshly installed appliance has: CN `hostname`, SAN `hostname` and the
 * listening address (so that clients may reach it by either). Made by signing
 * a CSR of a CA key with that same CA, so that the usual builders do the X.509
 * work. A server known by its IP alone is allowed, as real ones can be.
 */
export async function selfSignedServerCertificate(hostname: string, listenHost: string, days: number): Promise<{ certPem: string; keyPem: string }> {
  const own = await createCa({ cn: hostname, keySize: SERVER_PROFILE.key.bits, days: days + 1 });
  const names = [...new Set([hostname, listenHost])].filter((n) => n !== '0.0.0.0' && n !== '::');
  const csr = generateCsr({ keyPem: own.keyPem, commonName: hostname, dns: names.filter((n) => isIP(n) === 0), ips: names.filter((n) => isIP(n) !== 0) });
  return { certPem: await signCsr(own, csr, { days, allowIpOnly: true }), keyPem: own.keyPem };
}
