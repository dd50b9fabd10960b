import { withOptions } from './option-table.js';
import { join } from 'node:path';
import type { Command } from 'commander';
import { CA_CERT_FILE, CA_KEY_FILE } from '../cert/files.js';
import { SERVER_PROFILE } from '../cert/profiles.js';
import { formatSan } from '../cert/inspect-lines.js';
import { loadPki, passphraseFrom } from './cert-shared.js';
import { warnIfExposed } from './options.js';
import { printJson, printLines, warn } from './output.js';

interface IssueFlags {
  ca: string;
  dns: string[];
  ip: string[];
  out: string;
  days: number;
  keySize: string;
  allowIpOnly?: boolean;
  caPassphraseFile?: string;
  caPassphraseEnv?: string;
  force?: boolean;
  json?: boolean;
}

interface SignCsrFlags {
  ca: string;
  csr: string;
  out: string;
  days: number;
  allowNoSan?: boolean;
  allowIpOnly?: boolean;
  caPassphraseFile?: string;
  caPassphraseEnv?: string;
  force?: boolean;
  json?: boolean;
}

/** `depotkit cert issue`: a server key, certificate and chain in a folder. */
export function registerCertIssue(cert: Command): void {
  const command = withOptions(
    cert.command('issue').description('issue a server certificate: <out>/server-key.pem (0600), server-cert.pem, server-chain.pem (leaf + CA)'),
  );
  command.action(issue);
}

/** `depotkit cert sign-csr`: a PKCS#10 request signed with the server profile. */
export function registerCertSignCsr(cert: Command): void {
  const command = withOptions(
    cert.command('sign-csr').description(`sign a PKCS#10 request with the server profile (default ${SERVER_PROFILE.validity.csrDays} days)`),
  );
  command.action(signCsr);
}

/** The signing CA folder, checked to be one, its key's mode warned about, and its passphrase. */
async function signingCa(opts: { ca: string; caPassphraseFile?: string; caPassphraseEnv?: string; force?: boolean }) {
  const caPassphrase = await passphraseFrom(opts.caPassphraseFile, opts.caPassphraseEnv);
  await warnIfExposed(join(opts.ca, CA_KEY_FILE));
  return { caDir: opts.ca, caPassphrase, force: opts.force };
}

async function issue(opts: IssueFlags): Promise<void> {
  const { issueCert } = await loadPki();
  const { warnings, ...issued } = await issueCert(opts.out, {
    ...(await signingCa(opts)),
    dns: opts.dns,
    ips: opts.ip,
    days: opts.days,
    keySize: Number(opts.keySize),
    allowIpOnly: opts.allowIpOnly,
  });
  warnings.forEach((w) => warn(w));
  if (opts.json) return printJson(issued);
  const info = issued.certificate;
  printLines([
    `Issued ${info.subject} by ${info.issuer}, valid until ${info.notAfter.toISOString()}.`,
    `  SAN:         ${formatSan(info.san)}`,
    `  key:         ${issued.keyPath} (mode 0600)`,
    `  certificate: ${issued.certPath}`,
    `  chain:       ${issued.chainPath} (serve this one)`,
    `  SHA-256:     ${info.fingerprints.sha256}`,
  ]);
}

async function signCsr(opts: SignCsrFlags): Promise<void> {
  const { signCsrFile } = await loadPki();
  const { warnings, ...signed } = await signCsrFile(opts.csr, opts.out, {
    ...(await signingCa(opts)),
    days: opts.days,
    allowNoSan: opts.allowNoSan,
    allowIpOnly: opts.allowIpOnly,
  });
  warnings.forEach((w) => warn(w));
  if (opts.json) return printJson(signed);
  const info = signed.certificate;
  printLines([
    `Signed ${info.subject}, valid until ${info.notAfter.toISOString()}: ${opts.out}`,
    `  SAN:     ${formatSan(info.san) || '(none)'}`,
    `  SHA-256: ${info.fingerprints.sha256}`,
    `The CA certificate to send with it: ${join(opts.ca, CA_CERT_FILE)}`,
  ]);
}
