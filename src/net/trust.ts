import { createSecureContext, type SecureContext } from 'node:tls';
import { BoundedCache } from '../util/bounded-cache.js';
import { registerSecret } from '../util/scrub.js';

/** The `Authorization` header of HTTP Basic authentication; its credentials are as secret as the password, to the scrub too. */
export function basicAuthorization(user: string, password: string): string {
  return `Basic ${registerSecret(Buffer.from(`${user}:${password}`).toString('base64'))}`;
}

/** What a connection trusts: these CAs (PEM), else the system store. */
export interface Trust {
  caPems?: readonly string[];
  /**
   * Any certificate of `caPems` is an anchor, a CA's or the server's own (a leaf), as the
   * installer's Java trust manager takes it; else a chain must reach a self-signed root.
   */
  partialChain?: boolean;
  minVersion?: 'TLSv1' | 'TLSv1.2';
  ciphers?: string;
}

/** Trust stores seen, each parsed once: a fleet of clients trusting the same CAs shares one context instead of building one per connection. */
const contexts = new BoundedCache<string, SecureContext>(64);

/**
 * The shared TLS context of `trust`; the options themselves where they make no context (a PEM that
 * does not parse), so that the connection fails with the error it would have had.
 */
export function trustOptions(
  trust: Trust = {},
): { secureContext: SecureContext } | { ca?: string[]; allowPartialTrustChain?: boolean; minVersion?: Trust['minVersion'] } {
  const rules = {
    ...(trust.caPems ? { ca: [...trust.caPems] } : {}),
    ...(trust.partialChain ? { allowPartialTrustChain: true } : {}),
    ...(trust.minVersion ? { minVersion: trust.minVersion } : {}),
    ...(trust.ciphers ? { ciphers: trust.ciphers } : {}),
  };
  try {
    return { secureContext: contexts.get(JSON.stringify(rules), () => createSecureContext(rules)) };
  } catch {
    return rules;
  }
}
