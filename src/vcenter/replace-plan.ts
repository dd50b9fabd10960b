import { MGMT_CSR_KEY_SIZES, MGMT_CSR_VALIDITY_DAYS, MGMT_TLS_KEY_FIELD } from '../constants.js';
import { normalizePem, parsePrivateKey, pathToRoot, readCertificate, splitPemBlocks, type Certificate } from '../cert/index.js';
import { usageError } from '../util/errors.js';
import { hostOf } from '../util/url.js';
import { parseServerUrl } from './client.js';
import type { ReplaceCertOptions } from './replace-types.js';
import type { TlsReplaceSpec } from './wire.js';

/** What the replacement works with, checked before the server is asked for anything. */
export interface ReplacePlan {
  origin: URL;
  host: string;
  /** The CA's certificate, then its issuers up to the root. */
  caPems: string[];
  days: number;
  /** A certificate made elsewhere, checked, as the request that installs it. */
  custom?: { spec: TlsReplaceSpec; info: Certificate };
}

/** The options checked, the CA's chain and a certificate made elsewhere judged: every refusal comes before the login. */
export function planReplacement(opts: ReplaceCertOptions): ReplacePlan {
  const origin = parseServerUrl(opts.server);
  const host = hostOf(origin);
  const caPems = splitPemBlocks(normalizePem(opts.ca.certPem), 'CERTIFICATE');
  if (caPems.length === 0) throw usageError('The CA holds no certificate.');
  if (!opts.custom && !opts.ca.keyPem) {
    throw usageError("Signing the server's CSR needs the CA's key: give a CA with its key, or a certificate made elsewhere with its key.");
  }
  if (opts.keySize !== undefined && !(MGMT_CSR_KEY_SIZES as readonly number[]).includes(opts.keySize)) {
    throw usageError(`The key size must be one of ${MGMT_CSR_KEY_SIZES.join(', ')}, not ${opts.keySize}.`);
  }
  const days = opts.days ?? MGMT_CSR_VALIDITY_DAYS;
  if (!Number.isInteger(days) || days < 1) throw usageError(`The validity must be a whole number of days, at least 1, not ${days}.`);
  const custom = opts.custom ? checkCustom(opts.custom, caPems, host) : undefined;
  if (!custom) checkCaChain(caPems);
  // Found before the server makes a key for nothing: signCsr would refuse it after the CSR.
  const caEnd = readCertificate(caPems[0]!).notAfter;
  if (!custom && Date.now() + days * 86_400_000 > caEnd.getTime()) {
    throw usageError(
      `A certificate valid for ${days} days would outlive the CA, which expires on ${caEnd.toISOString()}.`,
      'Give fewer `days`, or make a new CA.',
    );
  }
  return { origin, host, caPems, days, ...(custom ? { custom } : {}) };
}

/**
 * The CA that signs the CSR goes out as root_cert with its issuers: the server
 * refuses a root_cert that does not end in a self-signed root, so this is
 * checked before the server is asked for anything.
 */
function checkCaChain(caPems: string[]): void {
  const certs = caPems.map((p) => readCertificate(p));
  if (!certs[certs.length - 1]!.selfSigned) {
    throw usageError(
      `The CA certificate (${certs[0]!.subject}) is not a self-signed root and its issuers up to the root are not given; the server would refuse it.`,
      'For an intermediate CA, put its certificate first in ca-cert.pem, then its issuers up to the root.',
    );
  }
  if (certs.length > 1 && !pathToRoot(certs[0]!, certs.slice(1))) {
    throw usageError('The certificates after the CA certificate in ca-cert.pem do not lead from it to the root.');
  }
}

/**
 * Checks a certificate made elsewhere before anything is sent: its key, its
 * chain to the CA, its names. Returns the request with every PEM in LF form.
 */
function checkCustom(custom: { certPem: string; keyPem: string }, caPems: string[], host: string): { spec: TlsReplaceSpec; info: Certificate } {
  const [leafPem, ...intermediates] = splitPemBlocks(normalizePem(custom.certPem), 'CERTIFICATE');
  if (!leafPem) throw usageError('The certificate made elsewhere holds no certificate.');
  const keyPem = normalizePem(custom.keyPem);
  const info = readCertificate(leafPem);
  if (!info.pairsWith(parsePrivateKey(keyPem, 'The key of the certificate made elsewhere')))
    throw usageError('The key given does not belong to the certificate made elsewhere.');
  if (!info.coversHost(host)) throw usageError(`The certificate does not name ${host} in its subject alternative names; clients would reject it.`);
  // root_cert: the intermediates, then the CA's chain, ending in its self-signed root.
  const chain = [...new Set([...intermediates, ...caPems])];
  const pool = chain.map((p) => readCertificate(p));
  if (!pool[pool.length - 1]!.selfSigned) throw usageError('The CA certificate is not a self-signed root; give the CA with its chain up to the root.');
  if (!pathToRoot(info, pool)) throw usageError('The certificate was not issued by the given CA: its chain does not verify against it.');
  return { spec: { cert: leafPem, [MGMT_TLS_KEY_FIELD]: keyPem, root_cert: chain.join('') }, info };
}
