import { withOptions } from './option-table.js';
import { join } from 'node:path';
import type { Command } from 'commander';
import { CA_KEY_FILE } from '../cert/files.js';
import { formatSan } from '../cert/inspect-lines.js';
import { loadPki, passphraseFrom } from './cert-shared.js';
import { warnIfExposed } from './options.js';
import { printJson, printLines, warn } from './output.js';

interface RenewFlags {
  ca: string;
  out?: string;
  days: number;
  caPassphraseFile?: string;
  caPassphraseEnv?: string;
  force?: boolean;
  json?: boolean;
}

/** `depotkit cert renew`: the server folder's certificate issued again, same names and key size, same CA. */
export function registerCertRenew(cert: Command): void {
  const command = withOptions(
    cert
      .command('renew')
      .description(
        're-issue the certificate of a server folder (from cert issue) with the same names and key size, from the same CA; serve picks it up on SIGHUP',
      )
      .argument('<server-dir>', 'the folder holding server-key.pem, server-cert.pem and server-chain.pem'),
  );
  command.action(renew);
}

async function renew(serverDir: string, opts: RenewFlags): Promise<void> {
  const { renewCert } = await loadPki();
  await warnIfExposed(join(opts.ca, CA_KEY_FILE));
  const caPassphrase = await passphraseFrom(opts.caPassphraseFile, opts.caPassphraseEnv);
  const { warnings, ...renewed } = await renewCert(serverDir, { caDir: opts.ca, caPassphrase, outDir: opts.out, days: opts.days, force: opts.force });
  warnings.forEach((w) => warn(w));
  if (opts.json) return printJson(renewed);
  const info = renewed.certificate;
  printLines([
    `Renewed ${info.subject} by ${info.issuer}, valid until ${info.notAfter.toISOString()} (was ${renewed.previous.notAfter.toISOString()}).`,
    `  SAN:         ${formatSan(info.san)}`,
    `  key:         ${renewed.keyPath} (mode 0600, ${info.key.bits} bits)`,
    `  certificate: ${renewed.certPath}`,
    `  chain:       ${renewed.chainPath} (serve this one; send serve SIGHUP to load it)`,
    `  SHA-256:     ${info.fingerprints.sha256}`,
  ]);
}
