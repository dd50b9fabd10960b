import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { INSTALLER_MESSAGES, INSTALLER_MIN_RSA_BITS, SERVER_CERT_DEFAULT_DAYS } from '../constants.js';
import type { Finding } from '../util/findings.js';
import { inspectCertificate, parseCertificate, type CertInfo } from './inspect.js';
import { splitPemBlocks } from './pem.js';
import { normalizeIps } from './x509.js';

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
  /** Named in the fix commands; `<ca-dir>` and `<out-dir>` otherwise. */
  caDir?: string;
  outDir?: string;
}

const EXPIRY_WARNING_DAYS = 30;
const DAY_MS = 86_400_000;

/**
 * Does the certificate's SAN name `host`? One matcher for the whole tool, with
 * Node's (OpenSSL's X509_check_host) semantics and never the subject's CN, as
 * the installer's strict check: a wildcard only in the leftmost label, with at
 * least two labels after it (`*.local` and `*.com` match nothing), an IP only
 * by an IP entry, case and a trailing dot on the host ignored.
 */
export function certificateCoversHost(cert: string | X509Certificate, host: string): boolean {
  const x509 = typeof cert === 'string' ? new X509Certificate(cert) : cert;
  const bare = bareHost(host) ?? '';
  if (isIP(bare)) return x509.checkIP(bare) !== undefined;
  const name = bare.replace(/\.$/, '');
  return name !== '' && x509.checkHost(name, { subject: 'never' }) !== undefined;
}

/** Two DNS names alike, without case or a trailing dot. */
function sameName(a: string, b: string): boolean {
  const norm = (n: string) => n.toLowerCase().replace(/\.$/, '');
  return norm(a) === norm(b);
}

/** The host name as a certificate names it: trimmed, and a URL-style IPv6 literal ([fd00::1]) as the bare address. */
export function bareHost(host: string | undefined): string | undefined {
  return host?.trim().replace(/^\[(.*)\]$/, '$1');
}

/** The `depotkit cert issue` command that makes a certificate fit for `host`, keeping the names it had. */
function issueCommand(info: CertInfo, opts: LintOptions): string {
  const host = opts.host;
  const dns = [...(host && !isIP(host) ? [host.toLowerCase()] : []), ...info.san.dns.filter((d) => !d.startsWith('*.'))];
  const ips = [...(host && isIP(host) ? [host] : []), ...info.san.ips, ...(opts.ips ?? [])];
  const uniqueDns = [...new Set(dns)];
  if (uniqueDns.length === 0) uniqueDns.push('<depot FQDN>');
  const parts = ['depotkit cert issue', `--ca ${opts.caDir ?? '<ca-dir>'}`, ...uniqueDns.map((d) => `--dns ${d}`), ...[...new Set(ips)].map((i) => `--ip ${i}`), `--out ${opts.outDir ?? '<out-dir>'}`];
  return parts.join(' ');
}

/**
 * Checks a server certificate against what the installer's strict TLS client
 * requires for `host`. Findings have stable ids prefixed `cert.`. Throws a
 * one-sentence error when `certPem` is not a certificate.
 */
export function lintServerCertificate(certPem: string, opts: LintOptions = {}): Finding[] {
  const [leafPem, ...served] = splitPemBlocks(certPem, 'CERTIFICATE');
  const info = inspectCertificate(leafPem ?? certPem);
  const now = opts.now ?? new Date();
  const host = bareHost(opts.host);
  const fix = issueCommand(info, { ...opts, host });
  const reissue = `Issue a new certificate: ${fix}`;
  const evidence = { subject: info.subject, issuer: info.issuer, san: info.san, notBefore: info.notBefore.toISOString(), notAfter: info.notAfter.toISOString(), sha256: info.fingerprints.sha256Hex };
  const findings: Finding[] = [];
  const add = (f: Omit<Finding, 'evidence'> & { evidence?: Record<string, unknown> }) => findings.push({ ...f, evidence: { ...evidence, ...f.evidence } });

  if (info.san.dns.length + info.san.ips.length === 0) {
    add({
      id: 'cert.san.missing',
      severity: 'error',
      message: `The certificate (${info.subject}) has no subject alternative names.`,
      installer: `Checks the host name against the SAN only and fails the TLS handshake: "${INSTALLER_MESSAGES.secureProtocolError}".`,
      fix: reissue,
    });
  } else if (host && !certificateCoversHost(leafPem ?? certPem, host)) {
    const listed = [...info.san.dns.map((d) => `DNS:${d}`), ...info.san.ips.map((i) => `IP:${i}`)].join(', ');
    add({
      id: 'cert.san.host-missing',
      severity: 'error',
      message: `The certificate's SAN (${listed}) does not contain ${isIP(host) ? `IP:${host}` : `DNS:${host}`}, the name the installer connects to.`,
      installer: `Rejects the certificate for a host-name mismatch: "${INSTALLER_MESSAGES.secureProtocolError}".`,
      fix: reissue,
      evidence: { host },
    });
  }
  const missingIps = normalizeIps(opts.ips ?? []).filter((ip) => !certificateCoversHost(leafPem ?? certPem, ip));
  if (missingIps.length > 0 && info.san.dns.length + info.san.ips.length > 0) {
    add({
      id: 'cert.san.ip-missing',
      severity: 'error',
      message: `The certificate's SAN lacks ${missingIps.map((ip) => `IP:${ip}`).join(', ')}; the 9.1 depot service needs the IP in the SAN as well as the FQDN.`,
      installer: 'Rejects the certificate for a host-name mismatch when it connects by IP.',
      fix: `Issue a new certificate: ${issueCommand(info, { ...opts, ips: missingIps })}`,
      evidence: { ips: missingIps },
    });
  }
  if (info.commonName !== undefined && isIP(info.commonName)) {
    add({
      id: 'cert.cn.ip',
      severity: 'error',
      message: `The certificate's CN is an IP address (${info.commonName}).`,
      installer: 'Rejects a certificate whose CN is an IP, even when the SAN holds it.',
      fix: reissue,
    });
  } else if (host && !isIP(host) && info.commonName !== undefined && !sameName(info.commonName, host)) {
    add({
      id: 'cert.cn.host-mismatch',
      severity: 'warning',
      message: `The certificate's CN (${info.commonName}) is not ${host}; the installer expects the depot's FQDN as CN.`,
      fix: reissue,
      evidence: { host },
    });
  } else if (info.commonName === undefined) {
    add({ id: 'cert.cn.missing', severity: 'warning', message: 'The certificate has no CN; the installer expects the depot\'s FQDN there.', fix: reissue });
  }

  if (now > info.notAfter) {
    add({
      id: 'cert.expired',
      severity: 'error',
      message: `The certificate expired on ${info.notAfter.toISOString()}.`,
      installer: `Refuses the expired certificate: "${INSTALLER_MESSAGES.secureProtocolError}".`,
      fix: reissue,
    });
  } else if (now < info.notBefore) {
    add({
      id: 'cert.not-yet-valid',
      severity: 'error',
      message: `The certificate is not valid before ${info.notBefore.toISOString()}; the signer's clock or the installer's clock is wrong.`,
      installer: 'Refuses a certificate that is not yet valid.',
      fix: `Check both clocks, then if needed: ${fix}`,
    });
  } else if (info.notAfter.getTime() - now.getTime() < EXPIRY_WARNING_DAYS * DAY_MS) {
    add({
      id: 'cert.expiring-soon',
      severity: 'warning',
      message: `The certificate expires on ${info.notAfter.toISOString()}, within ${EXPIRY_WARNING_DAYS} days.`,
      fix: reissue,
    });
  }
  const lifetimeDays = (info.notAfter.getTime() - info.notBefore.getTime()) / DAY_MS;
  if (lifetimeDays > SERVER_CERT_DEFAULT_DAYS) {
    add({
      id: 'cert.validity.too-long',
      severity: 'info',
      message: `The certificate is valid for ${Math.round(lifetimeDays)} days; browsers refuse more than ${SERVER_CERT_DEFAULT_DAYS} (the installer does not mind).`,
      fix: reissue,
    });
  }

  const minBits = info.key.type === 'rsa' || info.key.type === 'rsa-pss' ? INSTALLER_MIN_RSA_BITS : 256;
  if (info.key.bits < minBits) {
    add({
      id: 'cert.key.too-small',
      severity: 'error',
      message: `The certificate's ${info.key.type.toUpperCase()} key has ${info.key.bits} bits; at least ${minBits} are required.`,
      installer: 'Its TLS client refuses keys this small.',
      fix: `${reissue} (the new key has 2048 bits; add --key-size 3072 for more)`,
    });
  }
  if (info.isCa) {
    add({
      id: 'cert.ca-flag',
      severity: 'error',
      message: 'The server certificate is a CA certificate (basicConstraints CA:TRUE); a CA certificate was probably installed on the web server by mistake.',
      installer: 'Does not accept a CA certificate as a server certificate.',
      fix: `Serve a leaf certificate issued by the CA: ${fix}`,
    });
  }
  if (info.extKeyUsage.length > 0 && !info.extKeyUsage.includes('serverAuth')) {
    add({
      id: 'cert.eku.no-server-auth',
      severity: 'error',
      message: `The certificate's extended key usage (${info.extKeyUsage.join(', ')}) lacks serverAuth, so it is not for TLS servers.`,
      installer: 'Refuses it for a TLS server.',
      fix: reissue,
    });
  }
  if (info.keyUsage.length > 0 && !info.keyUsage.includes('digitalSignature')) {
    add({
      id: 'cert.key-usage.no-digital-signature',
      severity: 'error',
      message: `The certificate's key usage (${info.keyUsage.join(', ')}) lacks digitalSignature, which TLS 1.2 ECDHE and TLS 1.3 need.`,
      fix: reissue,
    });
  }
  const digest = /^(md2|md5|sha1)WithRSAEncryption$|^ecdsa-with-SHA1$|^dsa-with-sha1$/i.exec(info.signatureAlgorithm);
  if (digest) {
    const sha1 = /sha1/i.test(info.signatureAlgorithm);
    add({
      id: 'cert.signature.weak',
      severity: sha1 ? 'warning' : 'error',
      message: `The certificate is signed with ${info.signatureAlgorithm}; ${sha1 ? 'Java and browsers are dropping SHA-1' : 'Java refuses MD2 and MD5 signatures'}.`,
      ...(sha1 ? {} : { installer: `Refuses the certificate: "${INSTALLER_MESSAGES.secureProtocolError}".` }),
      fix: `${reissue} (depotkit signs with SHA-256)`,
    });
  }
  if (info.version !== 3) {
    add({ id: 'cert.version', severity: 'error', message: `The certificate is X.509 v${info.version}; v3 is required for SANs.`, fix: reissue });
  }

  if (opts.caPems !== undefined) {
    findings.push(...lintChain(info, parseCertificate(leafPem ?? certPem), [...served, ...(opts.chainPems ?? [])], opts.caPems, now, fix));
  } else if (info.selfSigned) {
    add({
      id: 'cert.self-signed',
      severity: 'warning',
      message: 'The certificate is self-signed; the installer trusts it only once it is imported itself, and it cannot be replaced without importing again.',
      fix: `Issue it from a CA and import the CA once: ${fix}`,
    });
  }
  return findings;
}

/** Builds a path from the leaf through `intermediates` to one of `caPems`, checking signatures and CA flags. */
function lintChain(info: CertInfo, leaf: X509Certificate, intermediatePems: string[], caPems: string[], now: Date, fix: string): Finding[] {
  const anchors = caPems.flatMap((p) => splitPemBlocks(p, 'CERTIFICATE')).map((p) => ({ x509: parseCertificate(p, 'A CA certificate'), info: inspectCertificate(p, 'A CA certificate') }));
  const intermediates = intermediatePems.map((p) => ({ x509: parseCertificate(p, 'A chain certificate'), info: inspectCertificate(p, 'A chain certificate') }));
  const issues = (child: X509Certificate, parent: { x509: X509Certificate; info: CertInfo }) => parent.info.isCa && child.checkIssued(parent.x509) && child.verify(parent.x509.publicKey);
  let current = leaf;
  const path: CertInfo[] = [];
  const used = new Set<number>();
  for (let depth = 0; depth <= intermediates.length; depth++) {
    const anchor = anchors.find((a) => issues(current, a) || a.x509.raw.equals(current.raw));
    if (anchor) {
      const cas = anchor.x509.raw.equals(current.raw) ? path : [...path, anchor.info];
      const tooDeep = cas.find((c, i) => c.pathLen !== undefined && c.pathLen < i);
      if (tooDeep) {
        return [
          {
            id: 'cert.chain.path-length',
            severity: 'error',
            message: `${tooDeep.subject} allows ${tooDeep.pathLen} CA certificate(s) below it, but the chain has ${cas.indexOf(tooDeep)}.`,
            installer: `Refuses the chain: "${INSTALLER_MESSAGES.untrustedPath}".`,
            fix: `Issue the server certificate directly from a CA the installer trusts: ${fix}`,
          },
        ];
      }
      const expired = cas.find((c) => now > c.notAfter || now < c.notBefore);
      if (!expired) return [];
      return [
        {
          id: 'cert.chain.ca-expired',
          severity: 'error',
          message: `The certificate chains to ${anchor.info.subject}, but ${expired.subject} is valid only from ${expired.notBefore.toISOString()} to ${expired.notAfter.toISOString()}.`,
          installer: `Refuses the chain: "${INSTALLER_MESSAGES.untrustedPath}".`,
          fix: `Make a new CA (depotkit cert ca --out <ca-dir>), import it into the installer, then: ${fix}`,
          evidence: { ca: expired.subject, notAfter: expired.notAfter.toISOString() },
        },
      ];
    }
    // Each certificate is used once: the search stays linear in the chain's length for every step.
    const index = intermediates.findIndex((c, i) => !used.has(i) && issues(current, c));
    if (index < 0) break;
    used.add(index);
    path.push(intermediates[index]!.info);
    current = intermediates[index]!.x509;
  }
  return [
    {
      id: 'cert.chain.untrusted',
      severity: 'error',
      message: `The certificate (issued by ${info.issuer}) does not chain to the given CA (${anchors.map((a) => a.info.subject).join('; ')}).`,
      installer: `Fails the connection: "${INSTALLER_MESSAGES.secureProtocolError}" ("${INSTALLER_MESSAGES.untrustedPath}").`,
      fix: `Import the CA that issued it into the installer as TRUSTED_FOR_OUTBOUND, or issue one from the trusted CA: ${fix}`,
      evidence: { issuer: info.issuer, cas: anchors.map((a) => a.info.subject), sha256: info.fingerprints.sha256Hex },
    },
  ];
}
