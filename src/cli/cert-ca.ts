import { Option, type Command } from 'commander';
import { DEFAULT_CA_CN, DEFAULT_CA_DAYS, DEFAULT_CA_KEY_SIZE, type RsaKeySize } from '../cert/profiles.js';
import { daysOption, keySizeOption, loadPki, passphraseFrom } from './cert-shared.js';
import { forceOption, jsonOption } from './options.js';
import { printJson, printLines } from './output.js';

interface CaFlags {
  out: string;
  cn: string;
  days: number;
  keySize: string;
  passphraseFile?: string;
  passphraseEnv?: string;
  force?: boolean;
  json?: boolean;
}

/** `depotkit cert ca`: a private CA in a folder. */
export function registerCertCa(cert: Command): void {
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
    .action(makeCa);
}

async function makeCa(opts: CaFlags): Promise<void> {
  const { createCa, writeCaDir, readCertificate, assertNewPassphrase } = await loadPki();
  const passphrase = await passphraseFrom(opts.passphraseFile, opts.passphraseEnv);
  // Before the key is made: a passphrase too short fails at once.
  if (passphrase !== undefined) assertNewPassphrase(passphrase);
  const ca = await createCa({ cn: opts.cn, days: opts.days, keySize: Number(opts.keySize) as RsaKeySize });
  // Read back before writing: a certificate that cannot be read leaves no files behind.
  const info = readCertificate(ca.certPem);
  const paths = await writeCaDir(opts.out, ca, { force: opts.force, passphrase });
  if (opts.json) return printJson({ ...paths, certificate: info });
  printLines([
    `Made CA ${info.subject}, valid until ${info.notAfter.toISOString()}.`,
    `  key:         ${paths.keyPath} (mode 0600${passphrase !== undefined ? ', encrypted' : ''}; keep it offline)`,
    `  certificate: ${paths.certPath}`,
    `  SHA-256:     ${info.fingerprints.sha256}`,
    `Import ${paths.certPath} into the installer as TRUSTED_FOR_OUTBOUND, then: depotkit cert issue --ca ${opts.out} --dns <depot FQDN> --out <dir>`,
  ]);
}
