import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { bareHost } from '../util/url.js';

/**
 * Does the certificate's SAN name `host`? One matcher for the whole tool, with
 * Node's (OpenSSL's X509_check_host) semantics and never the subject's CN, as
 * the installer's strict check: a wildcard only in the leftmost label, with at
 * least two labels after it (`*.local` and `*.com` match nothing), an IP only
 * by an IP entry, case and a trailing dot on the host ignored.
 */
export function certificateCoversHost(cert: string | X509Certificate, host: string): boolean {
  const x509 = typeof cert === 'string' ? new X509Certificate(cert) : cert;
  const bare = bareHost(host);
  if (isIP(bare)) return x509.checkIP(bare) !== undefined;
  const name = bare.replace(/\.$/, '');
  return name !== '' && x509.checkHost(name, { subject: 'never' }) !== undefined;
}

/** Two DNS names alike, without case or a trailing dot. */
export function sameName(a: string, b: string): boolean {
  const norm = (n: string) => n.toLowerCase().replace(/\.$/, '');
  return norm(a) === norm(b);
}
