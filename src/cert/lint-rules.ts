import { isIP } from 'node:net';
import { INSTALLER_MESSAGES } from '../constants.js';
import type { Finding } from '../util/findings.js';
import type { Certificate } from './certificate.js';
import { sameName } from './host-match.js';
import { pathTooDeep, type ChainVerdict } from './lint-chain.js';
import type { ServerProfile } from './profiles.js';

/** What every rule may read besides the certificate itself. */
export interface LintContext {
  /** The name the installer connects to (a bare IP for an IPv6 literal); without it the name rules pass. */
  readonly host?: string;
  /** IP addresses the SAN must hold as well, in their canonical spelling. */
  readonly ips: readonly string[];
  readonly now: Date;
  /** The profile the certificate is held to: the server profile unless the caller gives another. */
  readonly profile: ServerProfile;
  /** Where the leaf chains to; undefined when no CA certificates were given. */
  readonly chain?: ChainVerdict;
  /** The `issueCert` operation, with its values, that makes a certificate fit, keeping its names (and adding `ips`). */
  command(ips?: readonly string[]): string;
}

/** A finding as a rule states it; the lint adds the rule's id and the certificate's evidence. */
export type LintDraft = Omit<Finding, 'id' | 'evidence'> & { evidence?: Record<string, unknown> };

/** One check, with the one finding id it reports. */
export interface LintRule {
  readonly id: string;
  check(info: Certificate, ctx: LintContext): LintDraft | undefined;
}

const reissue = (ctx: LintContext, ips?: readonly string[]) => `Issue a new certificate: ${ctx.command(ips)}`;
/** A certificate that only runs out is renewed in place, as the renewal runbook does; one from elsewhere is issued anew. */
const renew = (ctx: LintContext) =>
  `Renew it in its server folder: \`renewCert\` <server-dir> \`caDir\` <ca-dir> \`force\`, then reload serve (SIGHUP); for a certificate not made by \`issueCert\`: ${ctx.command()}`;
const hasSan = (info: Certificate) => info.san.dns.length + info.san.ips.length > 0;
const DAY_MS = 86_400_000;
const expired = (info: Certificate, now: Date) => now > info.notAfter;
// Written as negations of the checks before them: a date that cannot be read (NaN) passes them all, as it always has.
const notYetValid = (info: Certificate, now: Date) => !expired(info, now) && now < info.notBefore;
const inValidity = (info: Certificate, now: Date) => !expired(info, now) && !(now < info.notBefore);
const cnIsIp = (info: Certificate) => info.commonName !== undefined && isIP(info.commonName) !== 0;
const missingIps = (info: Certificate, ctx: LintContext) => ctx.ips.filter((ip) => !info.coversHost(ip));
const isRsa = (info: Certificate) => info.key.type === 'rsa' || info.key.type === 'rsa-pss';
const minBits = (info: Certificate, profile: ServerProfile) => (isRsa(info) ? profile.key.minBits.rsa : profile.key.minBits.ec);
const lapsedCa = (cas: Certificate[], now: Date) => cas.find((c) => now > c.notAfter || now < c.notBefore);
const untrustedPath = `Refuses the chain: "${INSTALLER_MESSAGES.untrustedPath}".`;

/**
 * The certificate lint, in the order findings are reported. A new check is one
 * entry; its id is stable (`depotkit check`, the README and users rely on it).
 */
export const LINT_RULES: readonly LintRule[] = [
  {
    id: 'cert.san.missing',
    check: (info, ctx) =>
      hasSan(info)
        ? undefined
        : {
            severity: 'error',
            message: `The certificate (${info.subject}) has no subject alternative names.`,
            installer: `Checks the host name against the SAN only and fails the TLS handshake: "${INSTALLER_MESSAGES.secureProtocolError}".`,
            fix: reissue(ctx),
          },
  },
  {
    id: 'cert.san.host-missing',
    check: (info, ctx) => {
      const { host } = ctx;
      if (!hasSan(info) || !host || info.coversHost(host)) return undefined;
      const listed = [...info.san.dns.map((d) => `DNS:${d}`), ...info.san.ips.map((i) => `IP:${i}`)].join(', ');
      return {
        severity: 'error',
        message: `The certificate's SAN (${listed}) does not contain ${isIP(host) ? `IP:${host}` : `DNS:${host}`}, the name the installer connects to.`,
        installer: `Rejects the certificate for a host-name mismatch: "${INSTALLER_MESSAGES.secureProtocolError}".`,
        fix: reissue(ctx),
        evidence: { host },
      };
    },
  },
  {
    id: 'cert.san.ip-missing',
    check: (info, ctx) => {
      const missing = missingIps(info, ctx);
      if (!hasSan(info) || missing.length === 0) return undefined;
      return {
        severity: 'error',
        message: `The certificate's SAN lacks ${missing.map((ip) => `IP:${ip}`).join(', ')}; the 9.1 depot service needs the IP in the SAN as well as the FQDN.`,
        installer: 'Rejects the certificate for a host-name mismatch when it connects by IP.',
        fix: reissue(ctx, missing),
        evidence: { ips: missing },
      };
    },
  },
  {
    id: 'cert.cn.ip',
    check: (info, ctx) =>
      cnIsIp(info)
        ? {
            severity: 'error',
            message: `The certificate's CN is an IP address (${info.commonName}).`,
            installer: 'Rejects a certificate whose CN is an IP, even when the SAN holds it.',
            fix: reissue(ctx),
          }
        : undefined,
  },
  {
    id: 'cert.cn.host-mismatch',
    check: (info, ctx) => {
      const { host } = ctx;
      if (info.commonName === undefined || cnIsIp(info) || !host || isIP(host) || sameName(info.commonName, host)) return undefined;
      return {
        severity: 'warning',
        message: `The certificate's CN (${info.commonName}) is not ${host}; the installer expects the depot's FQDN as CN.`,
        fix: reissue(ctx),
        evidence: { host },
      };
    },
  },
  {
    id: 'cert.cn.missing',
    check: (info, ctx) =>
      info.commonName === undefined
        ? { severity: 'warning', message: "The certificate has no CN; the installer expects the depot's FQDN there.", fix: reissue(ctx) }
        : undefined,
  },
  {
    id: 'cert.expired',
    check: (info, ctx) =>
      expired(info, ctx.now)
        ? {
            severity: 'error',
            message: `The certificate expired on ${info.notAfter.toISOString()}.`,
            installer: `Refuses the expired certificate: "${INSTALLER_MESSAGES.secureProtocolError}".`,
            fix: renew(ctx),
          }
        : undefined,
  },
  {
    id: 'cert.not-yet-valid',
    check: (info, ctx) =>
      notYetValid(info, ctx.now)
        ? {
            severity: 'error',
            message: `The certificate is not valid before ${info.notBefore.toISOString()}; the signer's clock or the installer's clock is wrong.`,
            installer: 'Refuses a certificate that is not yet valid.',
            fix: `Check both clocks, then if needed: ${ctx.command()}`,
          }
        : undefined,
  },
  {
    id: 'cert.expiring-soon',
    check: (info, ctx) => {
      const days = ctx.profile.validity.renewWithinDays;
      if (!inValidity(info, ctx.now) || !(info.notAfter.getTime() - ctx.now.getTime() < days * DAY_MS)) return undefined;
      return { severity: 'warning', message: `The certificate expires on ${info.notAfter.toISOString()}, within ${days} days.`, fix: renew(ctx) };
    },
  },
  {
    id: 'cert.validity.too-long',
    check: (info, ctx) => {
      const days = (info.notAfter.getTime() - info.notBefore.getTime()) / DAY_MS;
      const max = ctx.profile.validity.maxDays;
      if (!(days > max)) return undefined;
      return {
        severity: 'info',
        message: `The certificate is valid for ${Math.round(days)} days; browsers refuse more than ${max} (the installer does not mind).`,
        fix: reissue(ctx),
      };
    },
  },
  {
    id: 'cert.key.too-small',
    check: (info, ctx) => {
      const min = minBits(info, ctx.profile);
      if (!(info.key.bits < min)) return undefined;
      const { bits, sizes } = ctx.profile.key;
      const larger = sizes.find((s) => s > bits);
      return {
        severity: 'error',
        message: `The certificate's ${info.key.type.toUpperCase()} key has ${info.key.bits} bits; at least ${min} are required.`,
        installer: 'Its TLS client refuses keys this small.',
        fix: `${reissue(ctx)} (the new key has ${bits} bits${larger ? `; add \`keySize\` ${larger} for more` : ''})`,
      };
    },
  },
  {
    id: 'cert.ca-flag',
    check: (info, ctx) =>
      info.isCa && !ctx.profile.basicConstraints.ca
        ? {
            severity: 'error',
            message:
              'The server certificate is a CA certificate (basicConstraints CA:TRUE); a CA certificate was probably installed on the web server by mistake.',
            installer: 'Does not accept a CA certificate as a server certificate.',
            fix: `Serve a leaf certificate issued by the CA: ${ctx.command()}`,
          }
        : undefined,
  },
  {
    id: 'cert.eku.no-server-auth',
    check: (info, ctx) => {
      const needed = ctx.profile.extKeyUsage.tlsRequires;
      if (info.extKeyUsage.length === 0 || info.extKeyUsage.includes(needed)) return undefined;
      return {
        severity: 'error',
        message: `The certificate's extended key usage (${info.extKeyUsage.join(', ')}) lacks ${needed}, so it is not for TLS servers.`,
        installer: 'Refuses it for a TLS server.',
        fix: reissue(ctx),
      };
    },
  },
  {
    id: 'cert.key-usage.no-digital-signature',
    check: (info, ctx) => {
      const needed = ctx.profile.keyUsage.tlsRequires;
      if (info.keyUsage.length === 0 || info.keyUsage.includes(needed)) return undefined;
      return {
        severity: 'error',
        message: `The certificate's key usage (${info.keyUsage.join(', ')}) lacks ${needed}, which TLS 1.2 ECDHE and TLS 1.3 need.`,
        fix: reissue(ctx),
      };
    },
  },
  {
    id: 'cert.signature.weak',
    check: (info, ctx) => {
      if (!/^(md2|md5|sha1)WithRSAEncryption$|^ecdsa-with-SHA1$|^dsa-with-sha1$/i.test(info.signatureAlgorithm)) return undefined;
      const sha1 = /sha1/i.test(info.signatureAlgorithm);
      return {
        severity: sha1 ? 'warning' : 'error',
        message: `The certificate is signed with ${info.signatureAlgorithm}; ${sha1 ? 'Java and browsers are dropping SHA-1' : 'Java refuses MD2 and MD5 signatures'}.`,
        ...(sha1 ? {} : { installer: `Refuses the certificate: "${INSTALLER_MESSAGES.secureProtocolError}".` }),
        fix: `${reissue(ctx)} (depotkit signs with SHA-256)`,
      };
    },
  },
  {
    id: 'cert.version',
    check: (info, ctx) =>
      info.version !== 3 ? { severity: 'error', message: `The certificate is X.509 v${info.version}; v3 is required for SANs.`, fix: reissue(ctx) } : undefined,
  },
  {
    id: 'cert.chain.path-length',
    check: (_info, ctx) => {
      const tooDeep = ctx.chain?.trusted ? pathTooDeep(ctx.chain.cas) : undefined;
      if (!ctx.chain?.trusted || !tooDeep) return undefined;
      return {
        severity: 'error',
        message: `${tooDeep.subject} allows ${tooDeep.pathLen} CA certificate(s) below it, but the chain has ${ctx.chain.cas.indexOf(tooDeep)}.`,
        installer: untrustedPath,
        fix: `Issue the server certificate directly from a CA the installer trusts: ${ctx.command()}`,
      };
    },
  },
  {
    id: 'cert.chain.ca-expired',
    check: (_info, ctx) => {
      // A path already refused for its length is reported once, as that.
      if (!ctx.chain?.trusted || pathTooDeep(ctx.chain.cas)) return undefined;
      const lapsed = lapsedCa(ctx.chain.cas, ctx.now);
      if (!lapsed) return undefined;
      return {
        severity: 'error',
        message: `The certificate chains to ${ctx.chain.anchor.subject}, but ${lapsed.subject} is valid only from ${lapsed.notBefore.toISOString()} to ${lapsed.notAfter.toISOString()}.`,
        installer: untrustedPath,
        fix: `Make a new CA (\`makeCa\`), import it into the installer, then: ${ctx.command()}`,
        evidence: { ca: lapsed.subject, notAfter: lapsed.notAfter.toISOString() },
      };
    },
  },
  {
    id: 'cert.chain.untrusted',
    check: (info, ctx) => {
      if (!ctx.chain || ctx.chain.trusted) return undefined;
      const cas = ctx.chain.anchors.map((a) => a.subject);
      // Two CAs made with the same name (the default CN, say) differ only by their keys: name the one given by its fingerprint.
      const namesakes = ctx.chain.anchors.filter((a) => a.subject === info.issuer).map((a) => a.fingerprints.sha256);
      return {
        severity: 'error',
        message:
          namesakes.length > 0
            ? `The certificate is issued by ${info.issuer}, but not by the given CA of that name (SHA-256 ${namesakes.join(', ')}): two CAs share the name, and the one given did not sign it.`
            : `The certificate (issued by ${info.issuer}) does not chain to the given CA (${cas.join('; ')}).`,
        installer: `Fails the connection: "${INSTALLER_MESSAGES.secureProtocolError}" ("${INSTALLER_MESSAGES.untrustedPath}").`,
        fix: `Import the CA that issued it into the installer as TRUSTED_FOR_OUTBOUND, or issue one from the trusted CA: ${ctx.command()}`,
        evidence: { issuer: info.issuer, cas, sha256: info.fingerprints.sha256 },
      };
    },
  },
  {
    id: 'cert.self-signed',
    check: (info, ctx) =>
      // With CA certificates given, the chain rules judge a self-signed certificate.
      !ctx.chain && info.selfSigned
        ? {
            severity: 'warning',
            message:
              'The certificate is self-signed; the installer trusts it only once it is imported itself, and it cannot be replaced without importing again.',
            fix: `Issue it from a CA and import the CA once: ${ctx.command()}`,
          }
        : undefined,
  },
];
