import { daysLeft, readCertificates } from '../cert/certificate.js';
import { SERVER_PROFILE } from '../cert/profiles.js';
import { plural } from '../util/text.js';

/** The dates of a certificate, as the status data (ISO text) or the reader (dates) hold them. */
export interface DatedCertificate {
  subject: string;
  notBefore: string | Date;
  notAfter: string | Date;
}

/** What is wrong with the served certificate's dates. */
export interface CertificateDateProblem {
  severity: 'error' | 'warning';
  message: string;
  /** The renewal, for a certificate that ran out or soon will (a clock is fixed, not renewed). */
  fix?: string;
}

const RENEW = 'Renew it: `renewCert` <server-dir> `caDir` <ca-dir> `force`, then reload the server (SIGHUP).';

/**
 * Whether the certificate served has expired, is not yet valid, or expires within the window in which
 * check warns (the server profile's renewal window), in a sentence; undefined when none. serve says it at
 * start and on every reload, and the status page in its banner.
 */
export function certificateDateProblem(c: DatedCertificate, now = new Date()): CertificateDateProblem | undefined {
  const notBefore = new Date(c.notBefore);
  const notAfter = new Date(c.notAfter);
  const subject = c.subject || '(no subject)';
  if (now > notAfter)
    return {
      severity: 'error',
      message: `The certificate served (${subject}) expired on ${notAfter.toISOString()}: the installer refuses the depot until it is renewed.`,
      fix: RENEW,
    };
  if (now < notBefore)
    return {
      severity: 'error',
      message: `The certificate served (${subject}) is not valid before ${notBefore.toISOString()}: the installer refuses the depot until then, unless this host's or the signer's clock is wrong.`,
    };
  const left = daysLeft({ notAfter }, now);
  const window = SERVER_PROFILE.validity.renewWithinDays;
  if (left >= window) return undefined;
  return {
    severity: 'warning',
    message: `The certificate served (${subject}) expires on ${notAfter.toISOString()}, in ${plural(left, 'day')} (fewer than ${window}): the installer refuses the depot once it has expired.`,
    fix: RENEW,
  };
}

/** The same for the first certificate of `certPem` (the leaf); undefined when it cannot be read. */
export function servedCertificateProblem(certPem: string, now = new Date()): CertificateDateProblem | undefined {
  const leaf = readCertificates(certPem)[0];
  return leaf ? certificateDateProblem(leaf, now) : undefined;
}
