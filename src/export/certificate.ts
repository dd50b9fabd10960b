import { resolve } from 'node:path';
import { readCertificate } from '../cert/certificate.js';
import { loadTlsMaterial, secureOptions } from '../server/tls.js';
import { argumentsError, usageError } from '../util/errors.js';
import type { ExportOptions } from './types.js';
import { configPath } from './values.js';

export interface ExportCertificate {
  cert?: string;
  key?: string;
  /** The certificate's DNS names and common name, for the server name. */
  names: string[];
}

/**
 * The certificate and key the configuration names, read now so that a wrong pair fails here rather than at
 * the server's start; none when the systemd unit lets serve issue its own from a CA.
 */
export async function exportCertificate(options: ExportOptions, warnings: string[]): Promise<ExportCertificate> {
  if (options.cert || options.key) {
    if (!options.cert || !options.key) throw argumentsError('`cert` and `key` go together.');
    if (options.ca) throw usageError('Give either `cert` and `key`, or `ca`, not both.');
    const cert = configPath(resolve(options.cert), '`cert`');
    const key = configPath(resolve(options.key), '`key`');
    const material = await loadTlsMaterial({ certFile: cert, keyFile: key });
    secureOptions(material);
    const info = readCertificate(material.certPem, cert);
    if (info.notAfter.getTime() < Date.now()) warnings.push(`The certificate ${cert} expired on ${info.notAfter.toISOString()}.`);
    return { cert, key, names: [...info.san.dns, ...(info.commonName ? [info.commonName] : [])] };
  }
  if (options.target !== 'systemd' || !options.ca) {
    const fix =
      options.target === 'systemd'
        ? 'Give `cert` and `key`, or `ca` <dir> to let depotkit serve issue one.'
        : 'Give `cert` and `key` (make them with `issueCert`).';
    throw usageError(options.ca ? `\`ca\` is for systemd only: ${options.target} cannot issue its own certificate.` : 'No certificate given.', fix);
  }
  return { names: [] };
}

/** The names serve issues its certificate with, which only the systemd unit has. */
export function assertIssuedNames(options: ExportOptions): void {
  if (options.target !== 'systemd' && ((options.dns?.length ?? 0) > 0 || (options.ip?.length ?? 0) > 0)) {
    throw usageError('`dns` and `ip` name the certificate depotkit serve issues with `ca` (systemd only).');
  }
}
