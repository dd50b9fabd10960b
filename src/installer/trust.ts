import { X509Certificate } from 'node:crypto';
import { TRUSTED_FOR_OUTBOUND } from '../constants.js';
import { parseCertificate, sha256Fingerprint } from '../cert/inspect.js';
import { splitPemBlocks } from '../cert/pem.js';
import { DepotkitError, EXIT, usageError } from '../util/errors.js';
import type { InstallerClient } from './client.js';
import type { TrustedCertificate } from './wire.js';

export interface TrustOutcome {
  subject: string;
  /** SHA-256 of the certificate, 64 lowercase hex digits. */
  sha256: string;
  action: 'imported' | 'already-trusted';
  alias?: string;
}

/**
 * What ensureTrusted reads of a certificate, by its PEM text, read once: a fleet's consumers are
 * given the same certificates and list them back in the same text, and parsing them again for each
 * consumer was a third of a 200-consumer push's CPU on this side. A PEM that does not parse throws,
 * and is not kept.
 */
const facts = new Map<string, { sha256: string; subject: string }>();
const MAX_FACTS = 1024;

function factsOf(pem: string): { sha256: string; subject: string } {
  let known = facts.get(pem);
  if (!known) {
    known = { subject: new X509Certificate(pem).subject.replace(/\n/g, ', '), sha256: sha256Fingerprint(pem) };
    if (facts.size >= MAX_FACTS) facts.clear();
    facts.set(pem, known);
  }
  return known;
}

/** The SHA-256 of a certificate a consumer lists, each PEM text read once; undefined for one that does not parse. */
export function sha256OfPem(pem: string): string | undefined {
  try {
    return factsOf(pem).sha256;
  } catch {
    // An entry the installer lists but that does not parse matches nothing.
    return undefined;
  }
}

/** The certificates of a PEM file's text, each as its own PEM; a one-sentence error when there are none. */
export function certificatesOf(text: string, source: string): string[] {
  const pems = splitPemBlocks(text, 'CERTIFICATE');
  if (pems.length === 0) throw usageError(`${source} holds no certificate (no BEGIN CERTIFICATE block).`);
  for (const pem of pems) parseCertificate(pem, source);
  return pems;
}

/**
 * Sentences about certificates given to trust that are not CA certificates:
 * a depot's own leaf works as a trust anchor (the installer's Java PKIX takes
 * any trusted certificate as one) until the depot's certificate is re-issued.
 */
export function leafTrustWarnings(pems: string[]): string[] {
  return pems
    .map((pem) => new X509Certificate(pem))
    .filter((cert) => !cert.ca)
    .map(
      (cert) =>
        `${cert.subject.replace(/\n/g, ', ')} is not a CA certificate (a server's own certificate?): the installer will trust that one certificate only, and the depot stops being trusted when its certificate is re-issued. Trust the CA that issued it instead (${cert.issuer.replace(/\n/g, ', ')}).`,
    );
}

/**
 * The entries of a consumer's list of trusted certificates that hold the certificate of this SHA-256, found by
 * certificate, never by alias (the consumer makes aliases up): one entry per alias it is listed under.
 */
export function listingsOf(list: TrustedCertificate[], sha256: string | undefined): TrustedCertificate[] {
  return sha256 === undefined ? [] : list.filter((e) => typeof e?.certificate === 'string' && sha256OfPem(e.certificate) === sha256);
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
    const { sha256, subject } = factsOf(pem);
    const [present] = listingsOf(list, sha256);
    if (present) {
      outcomes.push({ subject, sha256, action: 'already-trusted', alias: present.alias });
      continue;
    }
    const reply = await client.importTrusted(pem, usage);
    if (reply.status !== 200 && reply.status !== 201 && reply.status !== 409) throw client.apiError(`Importing ${subject}`, reply);
    // The vendor's example answers an empty page: the alias is read back from the list.
    const answered = reply.status === 409 ? undefined : listingsOf((reply.body as { elements?: TrustedCertificate[] })?.elements ?? [], sha256)[0];
    if (!answered) list = (await client.listTrusted()).elements;
    const alias = answered?.alias ?? listingsOf(list, sha256)[0]?.alias;
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
