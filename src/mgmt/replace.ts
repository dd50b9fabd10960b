import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { MGMT_CSR_KEY_SIZES, MGMT_CSR_VALIDITY_DAYS, MGMT_TLS_KEY_FIELD, type MgmtApiGeneration } from '../constants.js';
import {
  certificateCoversHost,
  inspectCertificate,
  normalizePem,
  parsePrivateKey,
  sha256Fingerprint,
  signCsr,
  splitPemBlocks,
  type CertInfo,
} from '../pki/index.js';
import { DepotkitError, EXIT, usageError } from '../util/errors.js';
import { hasErrors, type Finding } from '../util/findings.js';
import { REPLACE_DEFAULTS } from './choices.js';
import { chainsToRoot, isSelfSigned } from './chain.js';
import { hostOf } from '../util/url.js';
import { MgmtClient, parseServerUrl, type ApiChoice } from './client.js';
import { handshake, waitForCertificate, type WaitStatus } from './served.js';
import type { CsrSpec, TlsInfo, TlsReplaceSpec } from './wire.js';

/** Subject fields of the CSR; the server's host name fills CN and SAN by default. */
export interface CsrSubject {
  cn?: string;
  san?: string[];
  organization?: string;
  organizationUnit?: string;
  country?: string;
  state?: string;
  locality?: string;
  email?: string;
}

export interface ReplaceCertOptions {
  server: string;
  user: string;
  password: string;
  /**
   * The toolkit's CA. Its certificate (PEM; an intermediate CA followed by its
   * issuers up to the root) goes out as root_cert and is what the new
   * certificate is verified against; its key signs the CSR (not needed with `custom`).
   */
  ca: { certPem: string; keyPem?: string };
  subject?: CsrSubject;
  /** Key size the server generates; the server's default (3072 on current versions) when absent. */
  keySize?: number;
  /** Validity of the certificate signed for the CSR; 730 days (the server's fixed two years) by default. */
  days?: number;
  api?: ApiChoice;
  /** Trust for the server's current certificate. */
  serverCaPems?: string[];
  insecure?: boolean;
  /** Check and show what would be done; request no CSR, replace nothing. */
  dryRun?: boolean;
  /** A certificate made elsewhere (leaf first, intermediates may follow) and its private key. */
  custom?: { certPem: string; keyPem: string };
  /** How long to wait for the restarted server to serve the new certificate; 15 minutes by default. */
  waitTimeoutMs?: number;
  pollMs?: number;
  requestTimeoutMs?: number;
  /** Progress: one line per step. */
  onStep?: (step: string) => void;
  onWait?: (status: WaitStatus) => void;
}

export interface CertSummary {
  subject: string;
  issuer: string;
  san: string[];
  notBefore: string;
  notAfter: string;
  sha256: string;
}

export interface ReplaceCertReport {
  server: string;
  api: MgmtApiGeneration;
  mode: 'csr' | 'custom';
  dryRun: boolean;
  /** The certificate served before. */
  previous: CertSummary;
  /** The CSR specification sent (or that would be sent). */
  csrSpec?: CsrSpec;
  /** The certificate installed (or that would be, with `custom`). */
  certificate?: CertSummary;
  /** How long the restart took to show the new certificate; `sawRestart` when the server was seen down. */
  restart?: { waitedMs: number; polls: number; sawRestart: boolean };
  /** The TLS check of the served certificate against the CA and the host name. */
  verified?: { trusted: boolean; hostname: boolean; detail?: string };
  /** Why a dry run would fail, or what went wrong after the restart (ids `mgmt.*`). */
  findings: Finding[];
  ok: boolean;
}

/**
 * The whole replacement: session, CSR (or a certificate made elsewhere),
 * signing with the toolkit's CA, LF-only PEM, replace, waiting through the
 * restart, and a TLS check of what the server then serves.
 */
export async function replaceCertificate(opts: ReplaceCertOptions): Promise<ReplaceCertReport> {
  const origin = parseServerUrl(opts.server);
  const host = hostOf(origin);
  const step = opts.onStep ?? (() => {});
  const caPems = splitPemBlocks(normalizePem(opts.ca.certPem), 'CERTIFICATE');
  if (caPems.length === 0) throw usageError('The CA holds no certificate.');
  if (!opts.custom && !opts.ca.keyPem)
    throw usageError("Signing the server's CSR needs the CA's key: give a CA with its key, or a certificate made elsewhere with its key.");
  if (opts.keySize !== undefined && !(MGMT_CSR_KEY_SIZES as readonly number[]).includes(opts.keySize)) {
    throw usageError(`The key size must be one of ${MGMT_CSR_KEY_SIZES.join(', ')}, not ${opts.keySize}.`);
  }
  const days = opts.days ?? MGMT_CSR_VALIDITY_DAYS;
  if (!Number.isInteger(days) || days < 1) throw usageError(`The validity must be a whole number of days, at least 1, not ${days}.`);
  const custom = opts.custom ? checkCustom(opts.custom, caPems, host) : undefined;
  if (!custom) checkCaChain(caPems);
  // Found before the server makes a key for nothing: signCsr would refuse it after the CSR.
  const caEnd = inspectCertificate(caPems[0]!).notAfter;
  if (!custom && Date.now() + days * 86_400_000 > caEnd.getTime()) {
    throw usageError(
      `A certificate valid for ${days} days would outlive the CA, which expires on ${caEnd.toISOString()}.`,
      'Give fewer `days`, or make a new CA.',
    );
  }

  step(`Opening a session on ${origin.host}...`);
  const client = await MgmtClient.connect({
    server: opts.server,
    user: opts.user,
    password: opts.password,
    api: opts.api,
    trust: { caPems: opts.serverCaPems, insecure: opts.insecure },
    timeoutMs: opts.requestTimeoutMs,
  });
  // Everything after the login is inside the try: a failure must still end the session and close connections.
  try {
    const report: ReplaceCertReport = {
      server: origin.origin,
      api: client.generation,
      mode: custom ? 'custom' : 'csr',
      dryRun: opts.dryRun === true,
      previous: summaryOfTls(await client.getTls()),
      findings: [],
      ok: false,
    };
    let spec: TlsReplaceSpec;
    let certPem: string;
    if (custom) {
      certPem = custom.spec.cert;
      spec = custom.spec;
      report.certificate = summary(custom.info);
      if (report.certificate.sha256 === report.previous.sha256) {
        report.findings.push({
          id: 'mgmt.cert.already-served',
          severity: 'error',
          message: 'The certificate is the one the server serves already.',
          installer: 'The server refuses to replace a certificate with itself (400 INVALID_ARGUMENT).',
          fix: 'Nothing to do; to renew it, issue a new certificate (or give none and let the server make a CSR).',
        });
      }
    } else {
      report.csrSpec = csrSpec(opts.subject ?? {}, host, opts.keySize, report.previous.san);
      if (opts.dryRun) return finish(report);
      step(`Requesting a CSR (${report.csrSpec.key_size ?? 'server default'} bits) for ${report.csrSpec.subject_alt_name!.join(', ')}...`);
      const csrPem = await client.createCsr(report.csrSpec);
      // The server's own name (its PNID) may be an IP when it was installed without DNS: that is its identity.
      certPem = normalizePem(await signCsr({ certPem: caPems[0]!, keyPem: opts.ca.keyPem! }, csrPem, { days, allowIpOnly: true }));
      const info = inspectCertificate(certPem);
      report.certificate = summary(info);
      if (!certificateCoversHost(certPem, host)) {
        // The server's doing, after it made a key: not a usage error.
        throw new DepotkitError(
          `The server's CSR does not request the name ${host}; clients would reject the certificate, so it was not installed.`,
          EXIT.problems,
        );
      }
      spec = { cert: certPem, root_cert: caPems.join('') };
    }
    if (opts.dryRun) return finish(report);

    step(`Replacing the certificate (${report.certificate.subject}, valid to ${report.certificate.notAfter})...`);
    await client.replaceTls(spec);
    step('Waiting for the server to restart and serve the new certificate...');
    report.restart = await waitForCertificate(origin, sha256Fingerprint(certPem), {
      timeoutMs: opts.waitTimeoutMs ?? REPLACE_DEFAULTS.waitTimeoutMs,
      pollMs: opts.pollMs,
      onPoll: opts.onWait,
    });
    const shake = await handshake(origin, { caPems });
    report.verified = shake.ok
      ? {
          trusted: shake.authorized,
          hostname: shake.identityError === undefined,
          ...(shake.authorizationError || shake.identityError ? { detail: shake.authorizationError ?? shake.identityError } : {}),
        }
      : { trusted: false, hostname: false, detail: shake.reason };
    if (!report.verified.trusted) {
      report.findings.push({
        id: 'mgmt.served.untrusted',
        severity: 'error',
        message: `The served certificate does not verify against the CA: ${report.verified.detail}.`,
        evidence: { host },
        fix: 'Check that `ca` is the CA that signed it, and that the server sends the chain up to it.',
      });
    } else if (!report.verified.hostname) {
      report.findings.push({
        id: 'mgmt.served.host-mismatch',
        severity: 'error',
        message: `The served certificate does not match ${host}: ${report.verified.detail}.`,
        evidence: { host },
        fix: `Replace it again with ${host} in the SAN (\`san\` ${host}).`,
      });
    }
    step(`The server serves the new certificate${report.findings.length === 0 ? ', trusted by the CA and valid for ' + host : ''}.`);
    return finish(report);
  } finally {
    await client.close();
  }
}

/** Sets `ok`; findings and ok come last, so that a JSON report reads top-down. */
function finish(report: ReplaceCertReport): ReplaceCertReport {
  const { findings, ok: _ok, ...rest } = report;
  return { ...rest, findings, ok: !hasErrors(findings) };
}

/**
 * CN and SAN default to the host name the client connects with, which the SAN
 * always includes. Reached by IP, the server's own DNS name (the first one its
 * current certificate names) becomes the CN: clients reject a CN that is an IP.
 * Every DNS name and IP of the current certificate stays in the SAN: the server
 * refuses a certificate without its own name, which need not be the one it was
 * reached by (localhost and 127.0.0.1, an FQDN and its IP). Wildcards are left
 * out: the server's CSR names hosts, and it refuses wildcard machine certificates.
 */
export function csrSpec(subject: CsrSubject, host: string, keySize?: number, currentNames: string[] = []): CsrSpec {
  const hostNames = currentNames.filter((n) => !n.includes('*'));
  const serverName = isIP(host) !== 0 ? hostNames.find((n) => isIP(n) === 0) : undefined;
  const cn = subject.cn ?? serverName ?? host;
  const sans: string[] = [];
  for (const name of [cn, ...(subject.san ?? []), host, ...hostNames].map((n) => n.trim())) {
    if (name !== '' && !sans.some((s) => s.toLowerCase() === name.toLowerCase())) sans.push(name);
  }
  const spec: CsrSpec = { common_name: cn, subject_alt_name: sans };
  if (keySize !== undefined) spec.key_size = keySize;
  if (subject.organization !== undefined) spec.organization = subject.organization;
  if (subject.organizationUnit !== undefined) spec.organization_unit = subject.organizationUnit;
  if (subject.country !== undefined) spec.country = subject.country;
  if (subject.state !== undefined) spec.state_or_province = subject.state;
  if (subject.locality !== undefined) spec.locality = subject.locality;
  if (subject.email !== undefined) spec.email_address = subject.email;
  return spec;
}

/**
 * The CA that signs the CSR goes out as root_cert with its issuers: the server
 * refuses a root_cert that does not end in a self-signed root, so this is
 * checked before the server is asked for anything.
 */
function checkCaChain(caPems: string[]): void {
  const certs = caPems.map((p) => new X509Certificate(p));
  if (!isSelfSigned(certs[certs.length - 1]!)) {
    throw usageError(
      `The CA certificate (${certs[0]!.subject.replace(/\n/g, ', ')}) is not a self-signed root and its issuers up to the root are not given; the server would refuse it.`,
      'For an intermediate CA, put its certificate first in ca-cert.pem, then its issuers up to the root.',
    );
  }
  if (certs.length > 1 && !chainsToRoot(certs[0]!, certs.slice(1))) {
    throw usageError('The certificates after the CA certificate in ca-cert.pem do not lead from it to the root.');
  }
}

/**
 * Checks a certificate made elsewhere before anything is sent: its key, its
 * chain to the CA, its names. Returns the request with every PEM in LF form.
 */
function checkCustom(custom: { certPem: string; keyPem: string }, caPems: string[], host: string): { spec: TlsReplaceSpec; info: CertInfo } {
  const [leafPem, ...intermediates] = splitPemBlocks(normalizePem(custom.certPem), 'CERTIFICATE');
  if (!leafPem) throw usageError('The certificate made elsewhere holds no certificate.');
  const keyPem = normalizePem(custom.keyPem);
  const leaf = new X509Certificate(leafPem);
  if (!leaf.checkPrivateKey(parsePrivateKey(keyPem, 'The key of the certificate made elsewhere')))
    throw usageError('The key given does not belong to the certificate made elsewhere.');
  const info = inspectCertificate(leafPem);
  if (!certificateCoversHost(leaf, host)) throw usageError(`The certificate does not name ${host} in its subject alternative names; clients would reject it.`);
  // root_cert: the intermediates, then the CA's chain, ending in its self-signed root.
  const chain = [...new Set([...intermediates, ...caPems])];
  const pool = chain.map((p) => new X509Certificate(p));
  if (!isSelfSigned(pool[pool.length - 1]!)) throw usageError('The CA certificate is not a self-signed root; give the CA with its chain up to the root.');
  if (!chainsToRoot(leaf, pool)) throw usageError('The certificate was not issued by the given CA: its chain does not verify against it.');
  return { spec: { cert: leafPem, [MGMT_TLS_KEY_FIELD]: keyPem, root_cert: chain.join('') }, info };
}

function summary(info: CertInfo): CertSummary {
  return {
    subject: info.subject,
    issuer: info.issuer,
    san: [...info.san.dns, ...info.san.ips],
    notBefore: info.notBefore.toISOString(),
    notAfter: info.notAfter.toISOString(),
    sha256: info.fingerprints.sha256Hex,
  };
}

function summaryOfTls(tls: TlsInfo): CertSummary {
  return summary(inspectCertificate(tls.cert));
}
