import { withOptions } from './option-table.js';
import { type Command } from 'commander';
import { type RsaKeySize } from '../cert/profiles.js';
import { loadPki, passphraseFrom } from './cert-shared.js';
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
  withOptions(cert.command('ca').description('make a private CA: <out>/ca-key.pem (0600) and <out>/ca-cert.pem')).action(makeCa);
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
