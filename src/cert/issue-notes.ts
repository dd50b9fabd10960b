import { isIP } from 'node:net';
import { MAX_COMMON_NAME_LENGTH } from '../util/limits.js';
import type { Certificate } from './certificate.js';

/**
 * What to say of a certificate just made, beside it: the choices the profile
 * made for the caller (a validity cut at the CA's end, a CN that is not the
 * first name) and what the installer will refuse that the caller allowed.
 */

/** A certificate made anyway with `allowIpOnly`: the installer rejects a CN that is an IP, and a certificate with only IPs. */
export function ipOnlyNote(info: Certificate): string | undefined {
  const cnIp = info.commonName !== undefined && isIP(info.commonName) !== 0 ? info.commonName : undefined;
  const noDns = info.san.dns.length === 0 && info.san.ips.length > 0;
  if (cnIp === undefined && !noDns) return undefined;
  const what = noDns ? `has no DNS name${cnIp !== undefined ? ` and its CN is the IP ${cnIp}` : ''}` : `has the IP ${cnIp} as its CN`;
  return `the certificate ${what}: the installer will reject it.`;
}

/** The first DNS name was too long to be the CN, so another name is: the long one is still in the SAN. */
export function cnNotFirstNote(info: Certificate, dns: readonly string[]): string | undefined {
  const first = dns[0]?.trim().toLowerCase().replace(/\.$/, '');
  if (first === undefined || info.commonName === undefined || info.commonName === first) return undefined;
  return `${first} is longer than a CN may be (${MAX_COMMON_NAME_LENGTH} characters), so the CN is ${info.commonName}; both are in the SAN, which is what the installer checks.`;
}

/** A leaf is capped at its CA's end; said when that cut the requested validity. */
export function cappedNote(info: Certificate, days: number): string | undefined {
  if (info.notAfter.getTime() - info.notBefore.getTime() >= days * 86_400_000) return undefined;
  return `the CA expires on ${info.notAfter.toISOString()}, so the certificate ends then instead of after ${days} days.`;
}
