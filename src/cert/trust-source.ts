import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CA_CERT_FILE } from './files.js';
import { readPemFile } from './pem.js';
import { describeFsError, usageError } from '../util/errors.js';

const CERT_FILE = /\.(pem|crt|cer)$/i;

/**
 * CA certificates from `--ca` values: a PEM file (one or several
 * certificates), a CA folder made by `depotkit cert ca` (its ca-cert.pem), or
 * a folder of certificate files (as /etc/ssl/certs): every *.pem, *.crt or
 * *.cer in it that holds a certificate.
 */
export async function readCaPems(paths: readonly string[]): Promise<string[]> {
  const pems: string[] = [];
  for (const path of paths) {
    let info;
    try {
      info = await stat(path);
    } catch (err) {
      throw describeFsError(err, path);
    }
    if (!info.isDirectory()) {
      pems.push(...(await readPemFile(path, 'CERTIFICATE')));
      continue;
    }
    const own = await stat(join(path, CA_CERT_FILE)).catch(() => undefined);
    if (own?.isFile()) {
      pems.push(...(await readPemFile(join(path, CA_CERT_FILE), 'CERTIFICATE')));
      continue;
    }
    const found: string[] = [];
    for (const name of (await readdir(path)).filter((n) => CERT_FILE.test(n)).sort()) {
      // A key or a request beside the certificates is not a reason to stop.
      found.push(...(await readPemFile(join(path, name), 'CERTIFICATE').catch(() => [])));
    }
    if (found.length === 0) throw usageError(`The folder ${path} holds no certificate (*.pem, *.crt or *.cer).`);
    pems.push(...found);
  }
  return pems;
}
