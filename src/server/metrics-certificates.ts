import { readCertificates } from '../cert/certificate.js';

/** One series of the certificate gauge: the not-after, in Unix seconds, of the served certificate or of its CA. */
export interface CertificateSample {
  value: number;
  labels: { role: 'server' | 'ca'; subject: string; serial: string };
}

/**
 * The not-after of the served leaf and of its CA (the last certificate of the chain, when it is a CA), as the
 * status page names them. Nothing for plain HTTP or a file that cannot be read: a missing series is what an
 * absent() alert notices.
 */
export function certificateSamples(certPem: string | undefined): CertificateSample[] {
  if (certPem === undefined) return [];
  const chain = readCertificates(certPem);
  const leaf = chain[0];
  const ca = chain.length > 1 ? chain[chain.length - 1] : undefined;
  const samples: CertificateSample[] = [];
  const add = (role: 'server' | 'ca', notAfter: Date, subject: string, serial: string) =>
    samples.push({ value: Math.floor(notAfter.getTime() / 1000), labels: { role, subject, serial } });
  if (leaf) add('server', leaf.notAfter, leaf.subject, leaf.serial);
  if (ca?.isCa) add('ca', ca.notAfter, ca.subject, ca.serial);
  return samples;
}

/** The samples of the certificate now served, read again only when it changes (a SIGHUP). */
export function certificateGauge(served: () => string | undefined): () => CertificateSample[] {
  let seen: string | undefined;
  let samples: CertificateSample[] = [];
  return () => {
    const pem = served();
    if (pem !== seen) {
      seen = pem;
      samples = certificateSamples(pem);
    }
    return samples;
  };
}
