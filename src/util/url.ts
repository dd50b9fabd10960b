import { isIP } from 'node:net';
import { usageError } from './errors.js';

/**
 * The origin (`https://host[:port]`) of a server URL given by a user: no
 * scheme means https, a path is dropped. Only https, since the APIs need it.
 * `what` names the server in the messages, e.g. "the management server".
 */
export function parseHttpsOrigin(text: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(/^[a-z]+:\/\//i.test(text) ? text : `https://${text}`);
  } catch {
    throw usageError(`"${text}" is not a URL of ${what}; give it as https://host[:port].`);
  }
  if (url.protocol !== 'https:') {
    throw usageError(`${what.charAt(0).toUpperCase()}${what.slice(1)} is reached over HTTPS, not ${url.protocol.slice(0, -1)}: use https://${url.host}.`);
  }
  return new URL(url.origin);
}

/** A host as a certificate names it and a socket takes it: trimmed, an IPv6 address without the brackets a URL writes. */
export function bareHost(host: string): string {
  return host.trim().replace(/^\[(.*)\]$/, '$1');
}

/** A URL's host name as a certificate names it: an IPv6 address without its brackets. */
export function hostOf(url: URL): string {
  return bareHost(url.hostname);
}

/** A host as a URL (and nginx's or Apache's listen) writes it: an IPv6 address in brackets. */
export function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}
