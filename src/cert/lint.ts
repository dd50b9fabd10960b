import { isIP } from 'node:net';
import type { Finding } from '../util/findings.js';
import { bareHost } from '../util/url.js';
import { readCertificate, type Certificate } from './certificate.js';
import { chainVerdict } from './lint-chain.js';
import { LINT_RULES, type LintContext } from './lint-rules.js';
import { splitPemBlocks } from './pem.js';
import { SERVER_PROFILE, type ServerProfile } from './profiles.js';
import { normalizeIps } from './x509.js';

export { certificateCoversHost } from './certificate.js';

export interface LintOptions {
  /** The host name (or IP) the installer is given for the depot; without it the name checks are skipped. */
  host?: string;
  /**
   * IP addresses the SAN must hold as well as the host name: the 9.1 fleet
   * depot service checks both the FQDN and the IP.
   */
  ips?: string[];
  /** CA certificates the installer trusts; without them the chain is not checked. */
  caPems?: string[];
  /** Intermediates the server sends after its leaf (blocks after the first in `certPem` count too). */
  chainPems?: string[];
  now?: Date;
  /** Named in the fixes' `issueCert`; `<ca-dir>` and `<out-dir>` otherwise. */
  caDir?: string;
  outDir?: string;
  /** The profile the certificate is held to; the server profile that `issue` writes unless given. */
  profile?: ServerProfile;
}

/**
 * The `issueCert` operation, with the values that make a certificate fit for `host` and keep the names it had;
 * the command line shows it as its command and flags.
 */
function issueCommand(info: Certificate, host: string | undefined, ips: readonly string[], opts: LintOptions): string {
  const dns = [...(host && !isIP(host) ? [host.toLowerCase()] : []), ...info.san.dns.filter((d) => !d.startsWith('*.'))];
  const allIps = [...(host && isIP(host) ? [host] : []), ...info.san.ips, ...ips];
  const uniqueDns = [...new Set(dns)];
  if (uniqueDns.length === 0) uniqueDns.push('<depot FQDN>');
  const parts = [
    '`issueCert`',
    `\`caDir\` ${opts.caDir ?? '<ca-dir>'}`,
    ...uniqueDns.map((d) => `\`dns\` ${d}`),
    ...[...new Set(allIps)].map((i) => `\`ips\` ${i}`),
    `\`outDir\` ${opts.outDir ?? '<out-dir>'}`,
  ];
  return parts.join(' ');
}

/**
 * Checks a server certificate against what the installer's strict TLS client
 * requires for `host`: every rule of {@link LINT_RULES}, in order. Findings
 * have stable ids prefixed `cert.` and carry the certificate's names, dates
 * and fingerprint as evidence. Throws a one-sentence error when `certPem` is
 * not a certificate.
 */
export function lintServerCertificate(certPem: string, opts: LintOptions = {}): Finding[] {
  const [leafPem, ...served] = splitPemBlocks(certPem, 'CERTIFICATE');
  const info = readCertificate(leafPem ?? certPem);
  const host = opts.host === undefined ? undefined : bareHost(opts.host);
  const ips = normalizeIps(opts.ips ?? []);
  const ctx: LintContext = {
    ...(host ? { host } : {}),
    ips,
    now: opts.now ?? new Date(),
    profile: opts.profile ?? SERVER_PROFILE,
    ...(opts.caPems !== undefined ? { chain: chainVerdict(info, [...served, ...(opts.chainPems ?? [])], opts.caPems) } : {}),
    command: (extraIps = opts.ips ?? []) => issueCommand(info, host, extraIps, opts),
  };
  const evidence = {
    subject: info.subject,
    issuer: info.issuer,
    san: info.san,
    notBefore: info.notBefore.toISOString(),
    notAfter: info.notAfter.toISOString(),
    sha256: info.fingerprints.sha256,
  };
  const findings: Finding[] = [];
  for (const rule of LINT_RULES) {
    const draft = rule.check(info, ctx);
    if (draft) findings.push({ id: rule.id, ...draft, evidence: { ...evidence, ...draft.evidence } });
  }
  return findings;
}
