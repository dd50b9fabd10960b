import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { Option, type Command } from 'commander';
import { DEFAULT_CA_CN, DEFAULT_CA_DAYS, DEFAULT_CA_KEY_SIZE, RSA_KEY_SIZES, SERVER_PROFILE, type RsaKeySize } from '../pki/profiles.js';
import { CA_CERT_FILE, CA_KEY_FILE } from '../pki/files.js';
import type { CertInfo } from '../pki/inspect.js';
import { EXIT, describeFsError, usageError } from '../util/errors.js';
import { exists, writeFileAtomic } from '../util/fs.js';
import { MAX_COMMON_NAME_LENGTH, PEM_LIMITS } from '../util/limits.js';
import { readSecret } from '../util/secrets.js';
import { countBySeverity, formatFinding, hasErrors } from '../util/findings.js';
import { plural } from '../util/text.js';
import { assertSigningCaFolder, forceOption, jsonOption, signingCaOption, trustOption, warnIfExposed, wholeNumber } from './options.js';
import { collect, printJson, printLines, warn } from './output.js';

/** `--key-size`, one of the sizes the toolkit makes; commander's choices are strings, the library takes the number. */
function keySizeOption(defaultBits: number): Option {
  return new Option('--key-size <bits>', 'RSA key size').choices(RSA_KEY_SIZES.map(String)).default(String(defaultBits));
}

const daysOption = (defaultDays: number) => new Option('--days <n>', 'validity in days').argParser(wholeNumber('--days', { min: 1 })).default(defaultDays);

export function registerCertCommands(program: Command): void {
  const cert = program.command('cert').description('a private CA, server certificates, CSR signing, inspection');

  cert
    .command('ca')
    .description('make a private CA: <out>/ca-key.pem (0600) and <out>/ca-cert.pem')
    .requiredOption('--out <dir>', 'the CA folder')
    .option('--cn <name>', 'the CA common name', DEFAULT_CA_CN)
    .addOption(daysOption(DEFAULT_CA_DAYS))
    .addOption(keySizeOption(DEFAULT_CA_KEY_SIZE))
    .addOption(new Option('--passphrase-file <file>', 'encrypt the CA key with the passphrase on the first line of <file>').conflicts('passphraseEnv'))
    .option('--passphrase-env <name>', 'encrypt the CA key with the passphrase in environment variable <name>')
    .addOption(forceOption('replace an existing CA in <dir>'))
    .addOption(jsonOption())
    .action(
      async (opts: {
        out: string;
        cn: string;
        days: number;
        keySize: string;
        passphraseFile?: string;
        passphraseEnv?: string;
        force?: boolean;
        json?: boolean;
      }) => {
        const { createCa, writeCaDir, inspectCertificate, assertNewPassphrase } = await loadPki();
        const passphrase = await passphraseFrom(opts.passphraseFile, opts.passphraseEnv);
        // Before the key is made: a passphrase too short fails at once.
        if (passphrase !== undefined) assertNewPassphrase(passphrase);
        const ca = await createCa({ cn: opts.cn, days: opts.days, keySize: Number(opts.keySize) as RsaKeySize });
        // Read back before writing: a certificate that cannot be read leaves no files behind.
        const info = inspectCertificate(ca.certPem);
        const paths = await writeCaDir(opts.out, ca, { force: opts.force, passphrase });
        if (opts.json) return printJson({ ...paths, certificate: info });
        printLines([
          `Made CA ${info.subject}, valid until ${info.notAfter.toISOString()}.`,
          `  key:         ${paths.keyPath} (mode 0600${passphrase !== undefined ? ', encrypted' : ''}; keep it offline)`,
          `  certificate: ${paths.certPath}`,
          `  SHA-256:     ${info.fingerprints.sha256}`,
          `Import ${paths.certPath} into the installer as TRUSTED_FOR_OUTBOUND, then: depotkit cert issue --ca ${opts.out} --dns <depot FQDN> --out <dir>`,
        ]);
      },
    );

  cert
    .command('issue')
    .description('issue a server certificate: <out>/server-key.pem (0600), server-cert.pem, server-chain.pem (leaf + CA)')
    .addOption(signingCaOption().makeOptionMandatory())
    .option('--dns <name>', 'a DNS name; the first is the CN (repeatable)', collect, [])
    .option('--ip <addr>', 'an IP address for the SAN (repeatable)', collect, [])
    .requiredOption('--out <dir>', 'the folder to write to')
    .addOption(daysOption(SERVER_PROFILE.validity.days))
    .addOption(keySizeOption(SERVER_PROFILE.key.bits))
    .option('--allow-ip-only', 'allow a certificate without a DNS name (the installer rejects it)')
    .addOption(new Option('--ca-passphrase-file <file>', "the CA key's passphrase, first line of <file>").conflicts('caPassphraseEnv'))
    .option('--ca-passphrase-env <name>', "the CA key's passphrase, in environment variable <name>")
    .addOption(forceOption('replace existing files in <out>'))
    .addOption(jsonOption())
    .action(
      async (opts: {
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
      }) => {
        const { loadCaDir, issueServerCert, writeServerDir, inspectCertificate } = await loadPki();
        await assertSigningCaFolder(opts.ca);
        const ca = await loadCaDir(opts.ca, { passphrase: await passphraseFrom(opts.caPassphraseFile, opts.caPassphraseEnv) });
        await warnIfExposed(join(opts.ca, CA_KEY_FILE));
        const material = await issueServerCert(ca, {
          dns: opts.dns,
          ips: opts.ip,
          days: opts.days,
          keySize: Number(opts.keySize),
          allowIpOnly: opts.allowIpOnly,
        });
        const paths = await writeServerDir(opts.out, material, { force: opts.force });
        const info = inspectCertificate(material.certPem);
        warnIfCapped(info, opts.days);
        warnIfIpOnly(info);
        warnIfCnNotFirst(info, opts.dns);
        if (opts.json) return printJson({ ...paths, certificate: info });
        printLines([
          `Issued ${info.subject} by ${info.issuer}, valid until ${info.notAfter.toISOString()}.`,
          `  SAN:         ${formatSan(info.san)}`,
          `  key:         ${paths.keyPath} (mode 0600)`,
          `  certificate: ${paths.certPath}`,
          `  chain:       ${paths.chainPath} (serve this one)`,
          `  SHA-256:     ${info.fingerprints.sha256}`,
        ]);
      },
    );

  cert
    .command('sign-csr')
    .description(`sign a PKCS#10 request with the server profile (default ${SERVER_PROFILE.validity.csrDays} days)`)
    .addOption(signingCaOption().makeOptionMandatory())
    .requiredOption('--csr <file>', 'the request, PEM')
    .requiredOption('--out <file>', 'where to write the certificate, PEM')
    .addOption(daysOption(SERVER_PROFILE.validity.csrDays))
    .option('--allow-no-san', 'sign a request without SANs (its CN becomes the SAN)')
    .option('--allow-ip-only', 'sign a request whose CN is an IP or whose only names are IPs (the installer rejects it)')
    .addOption(new Option('--ca-passphrase-file <file>', "the CA key's passphrase, first line of <file>").conflicts('caPassphraseEnv'))
    .option('--ca-passphrase-env <name>', "the CA key's passphrase, in environment variable <name>")
    .addOption(forceOption('replace an existing <file>'))
    .addOption(jsonOption())
    .action(
      async (opts: {
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
      }) => {
        const { loadCaDir, signCsr, inspectCertificate } = await loadPki();
        await assertSigningCaFolder(opts.ca);
        const ca = await loadCaDir(opts.ca, { passphrase: await passphraseFrom(opts.caPassphraseFile, opts.caPassphraseEnv) });
        await warnIfExposed(join(opts.ca, CA_KEY_FILE));
        let csrText: string;
        try {
          csrText = await readFile(opts.csr, 'utf8');
        } catch (err) {
          throw describeFsError(err, opts.csr);
        }
        const certPem = await signCsr(ca, csrText, { days: opts.days, allowNoSan: opts.allowNoSan, allowIpOnly: opts.allowIpOnly });
        await writeFileAtomic(opts.out, certPem, { force: opts.force });
        const info = inspectCertificate(certPem);
        warnIfCapped(info, opts.days);
        warnIfIpOnly(info);
        if (opts.json) return printJson({ certPath: opts.out, certificate: info });
        printLines([
          `Signed ${info.subject}, valid until ${info.notAfter.toISOString()}: ${opts.out}`,
          `  SAN:     ${formatSan(info.san) || '(none)'}`,
          `  SHA-256: ${info.fingerprints.sha256}`,
          `The CA certificate to send with it: ${join(opts.ca, CA_CERT_FILE)}`,
        ]);
      },
    );

  cert
    .command('inspect <pem>')
    .description('show a certificate (the first of a chain file) or a CSR; with --host or --ca, lint the certificate as the installer would (exit 1 on errors)')
    .option('--host <name>', 'the host name (or IP) the installer connects to')
    .option('--ip <addr>', 'an IP the SAN must also hold, as the 9.1 depot service requires (repeatable)', collect, [])
    .addOption(trustOption('--ca', 'a CA the installer trusts'))
    .addOption(jsonOption())
    .action(async (file: string, opts: { host?: string; ip: string[]; ca: string[]; json?: boolean }) => {
      const { readPemFile, readCaPems, inspectCsr, inspectCertificate, lintServerCertificate } = await loadPki();
      // A leaf and its issuers, or a request: a file of thousands of certificates is refused at once.
      const blocks = await readPemFile(file, ['CERTIFICATE', 'CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST'], {
        maxBlocks: PEM_LIMITS.maxChainCertificates,
        what: 'certificate chain',
      });
      const isCert = (b: string) => b.startsWith('-----BEGIN CERTIFICATE-----');
      if (!isCert(blocks[0]!)) {
        // A request: show what it asks for (its signature is verified on reading).
        if (opts.host !== undefined || opts.ca.length > 0 || opts.ip.length > 0)
          throw usageError(`${file} is a certificate request; --host, --ip and --ca lint certificates.`);
        const csr = inspectCsr(blocks[0]!, file);
        if (opts.json) return printJson({ request: csr });
        return printLines([
          `Request:      ${csr.subject || '(empty subject)'}`,
          `SAN:          ${formatSan(csr.san) || '(none: sign-csr needs --allow-no-san)'}`,
          `Key:          RSA ${csr.key.bits} bits`,
          `Signature:    ${csr.signatureAlgorithm}, verified`,
        ]);
      }
      const certs = blocks.filter(isCert);
      const infos = certs.map((b, i) => inspectCertificate(b, i === 0 ? file : `Certificate ${i + 1} of ${file}`));
      const caPems = opts.ca.length > 0 ? await readCaPems(opts.ca) : undefined;
      // A CA folder (from cert ca) names itself in the fix commands.
      const caDirs = (await Promise.all(opts.ca.map(async (f) => ((await exists(join(f, CA_CERT_FILE))) ? f : undefined)))).filter(
        (d): d is string => d !== undefined,
      );
      const lint = opts.host !== undefined || caPems !== undefined || opts.ip.length > 0;
      if (opts.host !== undefined && opts.host.trim() === '') throw usageError('--host must not be empty.');
      const findings = lint
        ? lintServerCertificate(certs.join(''), { host: opts.host, ips: opts.ip, caPems, ...(caDirs.length === 1 ? { caDir: caDirs[0] } : {}) })
        : [];
      if (opts.json) {
        printJson({ certificate: infos[0], chain: infos.slice(1), ...(lint ? { ok: !hasErrors(findings), findings } : {}) });
      } else {
        infos.forEach((info, i) => printLines([...(i > 0 ? ['', `Chain certificate ${i}:`] : []), ...formatCertInfo(info)]));
        if (lint) {
          const counts = countBySeverity(findings);
          printLines([
            '',
            findings.length === 0
              ? `Lint: no problems${opts.host ? ` for ${opts.host}` : ''}.`
              : `Lint: ${plural(counts.error, 'error')}, ${plural(counts.warning, 'warning')}, ${plural(counts.info, 'note')}.`,
          ]);
          printLines(findings.flatMap(formatFinding));
        }
      }
      process.exitCode = hasErrors(findings) ? EXIT.problems : EXIT.ok;
    });
}

/** node-forge and the rest load only when a cert command runs, so every other command starts fast. */
const loadPki = () => import('../pki/index.js');

function formatSan(san: { dns: string[]; ips: string[] }): string {
  return [...san.dns.map((d) => `DNS:${d}`), ...san.ips.map((i) => `IP:${i}`)].join(', ');
}

/** A passphrase from a file or the environment, never from the command line (ps, shell history). */
async function passphraseFrom(file: string | undefined, env: string | undefined): Promise<string | undefined> {
  if (file === undefined && env === undefined) return undefined;
  return readSecret({ file, env }, 'CA key passphrase');
}

/** Said after --allow-ip-only made a certificate anyway: the installer rejects a CN that is an IP, and a certificate with only IPs. */
function warnIfIpOnly(info: CertInfo): void {
  const cnIp = info.commonName !== undefined && isIP(info.commonName) !== 0 ? info.commonName : undefined;
  const noDns = info.san.dns.length === 0 && info.san.ips.length > 0;
  if (cnIp === undefined && !noDns) return;
  const what = noDns ? `has no DNS name${cnIp !== undefined ? ` and its CN is the IP ${cnIp}` : ''}` : `has the IP ${cnIp} as its CN`;
  warn(`the certificate ${what}: the installer will reject it.`);
}

/** Said when the first --dns was too long to be the CN, so another name is: the long one is still in the SAN. */
function warnIfCnNotFirst(info: CertInfo, dns: string[]): void {
  const first = dns[0]?.trim().toLowerCase().replace(/\.$/, '');
  if (first === undefined || info.commonName === undefined || info.commonName === first) return;
  warn(
    `${first} is longer than a CN may be (${MAX_COMMON_NAME_LENGTH} characters), so the CN is ${info.commonName}; both are in the SAN, which is what the installer checks.`,
  );
}

/** The library caps a leaf at its CA's end; say so when that cut the requested validity. */
function warnIfCapped(info: CertInfo, days: number): void {
  if (info.notAfter.getTime() - info.notBefore.getTime() < days * 86_400_000) {
    warn(`the CA expires on ${info.notAfter.toISOString()}, so the certificate ends then instead of after ${days} days.`);
  }
}

export function formatCertInfo(info: CertInfo): string[] {
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
