import { isIP } from 'node:net';
import { certificateCoversHost, readCertificate, normalizePem, sha256Fingerprint, signCsr, type Certificate } from '../cert/index.js';
import { DepotkitError, EXIT } from '../util/errors.js';
import { REPLACE_DEFAULTS } from './choices.js';
import type { MgmtClient } from './client.js';
import type { ReplacePlan } from './replace-plan.js';
import type { CertSummary, CsrSubject, ReplaceCertOptions, ReplaceCertReport } from './replace-types.js';
import { handshake, waitForCertificate } from './served.js';
import { ensureTrustedChain } from './trust.js';
import type { CsrSpec, TlsInfo, TlsReplaceSpec } from './wire.js';

/** The request that installs a certificate made elsewhere; one the server serves already is a finding. */
export function customRequest(report: ReplaceCertReport, custom: NonNullable<ReplacePlan['custom']>): TlsReplaceSpec {
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
  return custom.spec;
}

/** The server's CSR, signed by the CA: the request that installs it. Undefined on a dry run, which asks for no CSR. */
export async function signedCsrRequest(
  client: MgmtClient,
  plan: ReplacePlan,
  opts: ReplaceCertOptions,
  report: ReplaceCertReport,
): Promise<TlsReplaceSpec | undefined> {
  const step = opts.onStep ?? (() => {});
  report.csrSpec = csrSpec(opts.subject ?? {}, plan.host, opts.keySize, report.previous.san);
  if (opts.dryRun) return undefined;
  step(`Requesting a CSR (${report.csrSpec.key_size ?? 'server default'} bits) for ${report.csrSpec.subject_alt_name!.join(', ')}...`);
  const csrPem = await client.createCsr(report.csrSpec);
  // The server's own name (its PNID) may be an IP when it was installed without DNS: that is its identity.
  const certPem = normalizePem(await signCsr({ certPem: plan.caPems[0]!, keyPem: opts.ca.keyPem! }, csrPem, { days: plan.days, allowIpOnly: true }));
  report.certificate = summary(readCertificate(certPem));
  if (!certificateCoversHost(certPem, plan.host)) {
    // The server's doing, after it made a key: not a usage error.
    throw new DepotkitError(
      `The server's CSR does not request the name ${plan.host}; clients would reject the certificate, so it was not installed.`,
      EXIT.problems,
    );
  }
  return { cert: certPem, root_cert: plan.caPems.join('') };
}

/** Installs the certificate, waits until the restarted server serves it, and checks it over TLS against the CA and the host name. */
export async function installAndVerify(
  client: MgmtClient,
  plan: ReplacePlan,
  spec: TlsReplaceSpec,
  opts: ReplaceCertOptions,
  report: ReplaceCertReport,
): Promise<void> {
  const step = opts.onStep ?? (() => {});
  if (opts.trustedChain) {
    step("Putting the CA into the server's trusted root chains...");
    report.trustedChain = await ensureTrustedChain(client, plan.caPems);
    // Trusted already, the CA goes out no more as root_cert.
    const { root_cert: _sent, ...rest } = spec;
    spec = rest;
  }
  step(`Replacing the certificate (${report.certificate!.subject}, valid to ${report.certificate!.notAfter})...`);
  await client.replaceTls(spec);
  step('Waiting for the server to restart and serve the new certificate...');
  report.restart = await waitForCertificate(plan.origin, sha256Fingerprint(spec.cert), {
    timeoutMs: opts.waitTimeoutMs ?? REPLACE_DEFAULTS.waitTimeoutMs,
    pollMs: opts.pollMs,
    onPoll: opts.onWait,
  });
  const shake = await handshake(plan.origin, { caPems: plan.caPems });
  report.verified = shake.ok
    ? {
        trusted: shake.authorized,
        hostname: shake.identityError === undefined,
        ...(shake.authorizationError || shake.identityError ? { detail: shake.authorizationError ?? shake.identityError } : {}),
      }
    : { trusted: false, hostname: false, detail: shake.reason };
  const host = plan.host;
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

function summary(info: Certificate): CertSummary {
  return {
    subject: info.subject,
    issuer: info.issuer,
    san: [...info.san.dns, ...info.san.ips],
    notBefore: info.notBefore.toISOString(),
    notAfter: info.notAfter.toISOString(),
    sha256: info.fingerprints.sha256,
  };
}

export function summaryOfTls(tls: TlsInfo): CertSummary {
  return summary(readCertificate(tls.cert));
}
