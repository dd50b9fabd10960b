import { countBySeverity, formatFinding, type Finding } from '../util/findings.js';
import { plural } from '../util/text.js';
import type { Certificate } from './certificate.js';
import type { CsrInfo } from './csr.js';

/**
 * What `cert inspect` shows, as lines for people: the layout is the library's, so that a caller
 * without the command line prints the same facts the same way.
 */

/** A certificate's or a request's subject alternative names as openssl lists them: `DNS:a, IP:b`. */
export function formatSan(san: { dns: string[]; ips: string[] }): string {
  return [...san.dns.map((d) => `DNS:${d}`), ...san.ips.map((i) => `IP:${i}`)].join(', ');
}

/** One certificate's facts, a line each. */
export function certificateLines(info: Certificate): string[] {
  return [
    `Subject:      ${info.subject}`,
    `Issuer:       ${info.issuer}${info.selfSigned ? ' (self-signed)' : ''}`,
    `SAN:          ${formatSan(info.san) || '(none)'}`,
    `Valid:        ${info.notBefore.toISOString()} to ${info.notAfter.toISOString()}`,
    `Serial:       ${info.serial}`,
    `Key:          ${info.key.type.toUpperCase()} ${info.key.bits} bits${info.key.curve ? ` (${info.key.curve})` : ''}`,
    `Key usage:    ${info.keyUsage.join(', ') || '(none)'}`,
    `Ext. usage:   ${info.extKeyUsage.join(', ') || '(none)'}`,
    `CA:           ${info.isCa ? `yes${info.pathLen !== undefined ? `, path length ${info.pathLen}` : ''}` : 'no'}`,
    `SHA-256:      ${info.fingerprints.sha256}`,
    `SHA-1:        ${info.fingerprints.sha1}`,
  ];
}

/**
 * A certificate and the rest of its chain, then, when it was linted, the lint's count and its
 * findings; `host` is the name it was linted for.
 */
export function inspectionLines(chain: readonly Certificate[], findings?: readonly Finding[], host?: string): string[] {
  const lines = chain.flatMap((info, i) => [...(i > 0 ? ['', `Chain certificate ${i}:`] : []), ...certificateLines(info)]);
  if (!findings) return lines;
  const counts = countBySeverity(findings);
  lines.push(
    '',
    findings.length === 0
      ? `Lint: no problems${host ? ` for ${host}` : ''}.`
      : `Lint: ${plural(counts.error, 'error')}, ${plural(counts.warning, 'warning')}, ${plural(counts.info, 'note')}.`,
  );
  return [...lines, ...findings.flatMap(formatFinding)];
}

/** What a certificate request asks for (its signature was verified when it was read). */
export function requestLines(csr: CsrInfo): string[] {
  return [
    `Request:      ${csr.subject || '(empty subject)'}`,
    `SAN:          ${formatSan(csr.san) || '(none: sign-csr needs `allowNoSan`)'}`,
    `Key:          RSA ${csr.key.bits} bits`,
    `Signature:    ${csr.signatureAlgorithm}, verified`,
  ];
}
