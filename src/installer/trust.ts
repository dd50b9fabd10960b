import { TRUSTED_FOR_OUTBOUND } from '../constants.js';
import { findByFingerprint, readCertificate, sha256Fingerprint } from '../cert/certificate.js';
import { splitPemBlocks } from '../cert/pem.js';
import { DepotkitError, EXIT, usageError } from '../util/errors.js';
import type { InstallerClient } from './client.js';
import type { TrustedCertificate } from './wire.js';

export interface TrustOutcome {
  subject: string;
  /** The certificate's SHA-256 fingerprint. */
  sha256: string;
  action: 'imported' | 'already-trusted';
  alias?: string;
}

/** The PEM text of an entry of a consumer's list of trusted certificates, for {@link findByFingerprint}. */
export const trustedPem = (entry: TrustedCertificate): unknown => entry?.certificate;

/** The certificates of a PEM file's text, each as its own PEM; a one-sentence error when there are none. */
export function certificatesOf(text: string, source: string): string[] {
  const pems = splitPemBlocks(text, 'CERTIFICATE');
  if (pems.length === 0) throw usageError(`${source} holds no certificate (no BEGIN CERTIFICATE block).`);
  for (const pem of pems) readCertificate(pem, source);
  return pems;
}

/**
 * Sentences about certificates given to trust that are not CA certificates:
 * a depot's own leaf works as a trust anchor (the installer's Java PKIX takes
 * any trusted certificate as one) until the depot's certificate is re-issued.
 */
export function leafTrustWarnings(pems: string[]): string[] {
  return pems
    .map((pem) => readCertificate(pem))
    .filter((cert) => !cert.isCa)
    .map(
      (cert) =>
        `${cert.subject} is not a CA certificate (a server's own certificate?): the installer will trust that one certificate only, and the depot stops being trusted when its certificate is re-issued. Trust the CA that issued it instead (${cert.issuer}).`,
    );
}

/**
 * Makes the installer trust each certificate for outbound TLS. Idempotent: it
 * compares certificates (their SHA-256), never aliases, and a 409 from the
 * installer also means "already trusted".
 */
export async function ensureTrusted(client: InstallerClient, pems: string[], usage: string = TRUSTED_FOR_OUTBOUND): Promise<TrustOutcome[]> {
  let list = (await client.listTrusted()).elements;
  const outcomes: TrustOutcome[] = [];
  for (const pem of pems) {
    const sha256 = sha256Fingerprint(pem);
    const { subject } = readCertificate(pem);
    const [present] = findByFingerprint(list, sha256, trustedPem);
    if (present) {
      outcomes.push({ subject, sha256, action: 'already-trusted', alias: present.alias });
      continue;
    }
    const reply = await client.importTrusted(pem, usage);
    if (reply.status !== 200 && reply.status !== 201 && reply.status !== 409) throw client.apiError(`Importing ${subject}`, reply);
    // The vendor's example answers an empty page: the alias is read back from the list.
    const answered =
      reply.status === 409 ? undefined : findByFingerprint((reply.body as { elements?: TrustedCertificate[] })?.elements ?? [], sha256, trustedPem)[0];
    if (!answered) list = (await client.listTrusted()).elements;
    const alias = answered?.alias ?? findByFingerprint(list, sha256, trustedPem)[0]?.alias;
    if (reply.status !== 409 && alias === undefined) {
      throw new DepotkitError(
        `The installer answered the import of ${subject} with HTTP ${reply.status} but does not list the certificate afterwards: it is not trusted.`,
        EXIT.problems,
      );
    }
    outcomes.push({ subject, sha256, action: reply.status === 409 ? 'already-trusted' : 'imported', alias });
  }
  return outcomes;
}
