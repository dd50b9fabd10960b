import { readFile } from 'node:fs/promises';
import { describeFsError } from '../util/errors.js';
import { writeFileAtomic } from '../util/fs.js';
import { loadCaDir } from './ca.js';
import { signCsr } from './csr.js';
import { readCertificate, type Certificate } from './certificate.js';
import { issueServerCert, writeServerDir, type IssueOptions } from './issue.js';
import { cappedNote, cnNotFirstNote, ipOnlyNote } from './issue-notes.js';
import { SERVER_PROFILE } from './profiles.js';

/** The CA folder that signs, and how to open its key. */
export interface SigningCa {
  /** A CA folder (`makeCa`): its key and certificate. */
  caDir: string;
  /** The CA key's passphrase, when it is encrypted. */
  caPassphrase?: string;
  /** Replace files already there. */
  force?: boolean;
}

export interface IssuedServerDir {
  keyPath: string;
  certPath: string;
  chainPath: string;
  certificate: Certificate;
  /** What the caller should know of the certificate made (a validity cut short, a CN that is not the first name, what the installer rejects). */
  warnings: string[];
}

const present = (notes: (string | undefined)[]): string[] => notes.filter((n): n is string => n !== undefined);

/**
 * The `issueCert` operation: a new key and server certificate signed by the CA
 * in `caDir`, written into `outDir` as the key (0600), the certificate and the
 * chain (leaf and CA) that a server sends.
 */
export async function issueCert(outDir: string, opts: IssueOptions & SigningCa): Promise<IssuedServerDir> {
  const { caDir, caPassphrase, force, ...issue } = opts;
  const ca = await loadCaDir(caDir, { passphrase: caPassphrase });
  const material = await issueServerCert(ca, issue);
  const paths = await writeServerDir(outDir, material, { force });
  const certificate = readCertificate(material.certPem);
  const days = issue.days ?? (issue.profile ?? SERVER_PROFILE).validity.days;
  return { ...paths, certificate, warnings: present([cappedNote(certificate, days), ipOnlyNote(certificate), cnNotFirstNote(certificate, issue.dns)]) };
}

export interface SignedCsrFile {
  certPath: string;
  certificate: Certificate;
  warnings: string[];
}

/**
 * Signs the request in `csrFile` with the CA in `caDir` and the server
 * profile, and writes the certificate to `outFile`.
 */
export async function signCsrFile(
  csrFile: string,
  outFile: string,
  opts: SigningCa & { days?: number; allowNoSan?: boolean; allowIpOnly?: boolean },
): Promise<SignedCsrFile> {
  const ca = await loadCaDir(opts.caDir, { passphrase: opts.caPassphrase });
  const csrText = await readFile(csrFile, 'utf8').catch((err: unknown) => Promise.reject(describeFsError(err, csrFile)));
  const days = opts.days ?? SERVER_PROFILE.validity.csrDays;
  const certPem = await signCsr(ca, csrText, { days, allowNoSan: opts.allowNoSan, allowIpOnly: opts.allowIpOnly });
  await writeFileAtomic(outFile, certPem, { force: opts.force });
  const certificate = readCertificate(certPem);
  return { certPath: outFile, certificate, warnings: present([cappedNote(certificate, days), ipOnlyNote(certificate)]) };
}
