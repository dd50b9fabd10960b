import { join } from 'node:path';
import { usageError } from '../util/errors.js';
import { loadCaDir } from './ca.js';
import { SERVER_CERT_FILE } from './files.js';
import { readCertificate, type Certificate } from './certificate.js';
import { cappedNote } from './issue-notes.js';
import type { IssuedServerDir, SigningCa } from './issue-dir.js';
import { issueServerCert, writeServerDir } from './issue.js';
import { readPemFile } from './pem.js';
import { SERVER_PROFILE } from './profiles.js';

export interface RenewOptions extends SigningCa {
  /** Where the new files go; the server folder itself unless given (then `force` replaces the old files). */
  outDir?: string;
  days?: number;
}

export interface RenewedServerDir extends IssuedServerDir {
  /** The certificate it replaces. */
  previous: Certificate;
}

/** The names to issue again: the CN first (so that it stays the CN), then the SAN's DNS names in their order, and its addresses. */
function namesOf(old: Certificate): { dns: string[]; ips: string[] } {
  const cn = old.commonName;
  const dns = cn !== undefined && old.san.dns.includes(cn) ? [cn, ...old.san.dns.filter((d) => d !== cn)] : old.san.dns;
  return { dns, ips: old.san.ips };
}

/**
 * The `renewCert` operation: a new key and certificate for the server folder `serverDir`, with the names (SAN and
 * CN) and key size of the certificate there, issued by the same CA folder, and written as `issueCert` writes (the
 * key, certificate and chain replaced together), so that the server's reload picks up the new pair.
 */
export async function renewCert(serverDir: string, opts: RenewOptions): Promise<RenewedServerDir> {
  const certPath = join(serverDir, SERVER_CERT_FILE);
  const [certPem] = await readPemFile(certPath, 'CERTIFICATE');
  const previous = readCertificate(certPem!, certPath);
  const ca = await loadCaDir(opts.caDir, { passphrase: opts.caPassphrase });
  // Another CA's certificate renewed here would be trusted by nobody who trusted the old one.
  if (!readCertificate(ca.certPem).issued(previous)) {
    throw usageError(
      `The certificate in ${certPath} (issued by ${previous.issuer}) was not issued by the CA in ${opts.caDir}.`,
      'Give the CA folder that issued it, or issue a new certificate from this CA with `issueCert`.',
    );
  }
  if (previous.key.type !== 'rsa') {
    throw usageError(
      `The certificate in ${certPath} has a ${previous.key.type} key; only RSA keys are made here.`,
      'Issue a new certificate with `issueCert`.',
    );
  }
  const { dns, ips } = namesOf(previous);
  const days = opts.days ?? SERVER_PROFILE.validity.days;
  const material = await issueServerCert(ca, { dns, ips, days, keySize: previous.key.bits, allowIpOnly: dns.length === 0 });
  const paths = await writeServerDir(opts.outDir ?? serverDir, material, { force: opts.force });
  const certificate = readCertificate(material.certPem);
  const capped = cappedNote(certificate, days);
  return { ...paths, certificate, previous, warnings: capped ? [capped] : [] };
}
