import { readCertificates } from '../cert/certificate.js';
import { NET_ERRORS, servedCertificate } from '../net/index.js';
import { INSTALLER_DEFAULTS } from './defaults.js';
import type { DepotSettings, TrustedCertificate } from './wire.js';
import { urlHost } from '../util/url.js';

/** The depot's https origin from a consumer's settings; undefined for none or plain HTTP (no chain to read). */
export function depotOriginOf(settings: DepotSettings): URL | undefined {
  const conf = settings.depotConfiguration;
  if (!conf) return undefined;
  if (conf.url !== undefined) {
    try {
      const url = new URL(conf.url);
      return url.protocol === 'https:' ? url : undefined;
    } catch {
      return undefined;
    }
  }
  if (!conf.hostname) return undefined;
  return new URL(`https://${urlHost(conf.hostname)}:${conf.port ?? INSTALLER_DEFAULTS.depotPort}`);
}

/** The chain a depot sends, or why it could not be read from here. */
export type ServedChain = { chain: string[] } | { unread: string };

/**
 * The certificates the depot sends (leaf first, as PEM), read in one TLS
 * handshake that verifies nothing: what is wanted is the chain, to find the
 * CA that anchors it. When the depot cannot be reached, the reason in words. `serverName`: the name
 * the consumers send, when `origin` is the depot's address as this host reaches it.
 */
export async function servedChainOf(origin: URL, timeoutMs = 10_000, serverName?: string): Promise<ServedChain> {
  const at = origin.port ? origin : new URL(`${origin.protocol}//${origin.host}:${INSTALLER_DEFAULTS.depotPort}`);
  const served = await servedCertificate(at, { timeoutMs, ...(serverName ? { asHost: serverName } : {}) });
  if (served.ok) return { chain: served.chainPems };
  return { unread: served.code === NET_ERRORS.connectTimeout ? `no answer within ${timeoutMs / 1000} s` : served.reason };
}

/** The certificates the depot sends (leaf first, as PEM); undefined when it cannot be reached. */
export async function readServedChain(origin: URL, timeoutMs?: number, serverName?: string): Promise<string[] | undefined> {
  const served = await servedChainOf(origin, timeoutMs, serverName);
  return 'chain' in served ? served.chain : undefined;
}

/**
 * Does `anchor` anchor the chain: is it one of the chain's certificates (a CA
 * or the leaf itself, which the installer's Java PKIX takes as an anchor too),
 * or the issuer of its top certificate (a chain sent without its root)?
 */
export function anchorsChain(anchor: string, chain: string[]): boolean {
  const [ca] = readCertificates(anchor);
  if (!ca) return false;
  const certs = chain.flatMap((pem) => readCertificates(pem)[0] ?? []);
  if (certs.some((c) => c.fingerprints.sha256 === ca.fingerprints.sha256)) return true;
  const top = certs[certs.length - 1];
  return top !== undefined && ca.issued(top);
}

/** The trusted entries that anchor the chain, by certificate (never by alias). */
export function anchorsOf(trusted: TrustedCertificate[], chain: string[]): TrustedCertificate[] {
  return trusted.filter((t) => anchorsChain(t.certificate, chain));
}
