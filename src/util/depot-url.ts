import { isIP } from 'node:net';
import { DEPOT_ROOT_DIR } from '../constants.js';
import { usageError } from './errors.js';
import type { Finding } from './findings.js';
import { hostOf, urlHost } from './url.js';

export interface DepotUrl {
  /** The base the installer prepends to `PROD/...`, without a trailing slash. */
  base: URL;
  host: string;
  port: number;
  isIp: boolean;
  https: boolean;
}

/**
 * The URL as the installer is given it when this host reaches the depot by another name or address
 * (`asHost`): the same URL with the installer's host name. Refuses a name a URL cannot carry.
 */
export function withInstallerHost(url: URL, installerHost: string | undefined): URL {
  const named = new URL(url.href);
  if (installerHost === undefined) return named;
  // URL's setter ignores a host it cannot take: compared after, so that the depot's address is never given instead.
  named.hostname = urlHost(installerHost);
  if (hostOf(named) !== installerHost.toLowerCase()) {
    throw usageError(`"${installerHost}" is not a host name: \`asHost\` takes the name alone, without a scheme or a port.`);
  }
  return named;
}

/** Parses the depot URL a user will give the installer, with findings about its form. */
export function parseDepotUrl(text: string, installerHost?: string): { url: DepotUrl; findings: Finding[] } {
  // host:port parses as a URL whose scheme is the host: say what was meant instead.
  if (!text.includes('://')) throw usageError(`The depot URL must start with https:// (e.g. https://${text.replace(/^\/+/, '')}).`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(`"${text}" is not a URL; give the depot as https://host[:port][/prefix].`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw usageError(`The depot URL must start with https:// or http://, not ${url.protocol}//.`);
  if (url.username || url.password) throw usageError('Do not put credentials in the depot URL; give them as `user` and `passwordFile`.');
  // The installer is given the name (when the depot is reached here by address), not the address.
  const installerOrigin = withInstallerHost(url, installerHost).origin;
  const findings: Finding[] = [];
  let path = url.pathname.replace(/\/+$/, '');
  const prodSuffix = new RegExp(`/${DEPOT_ROOT_DIR}$`);
  if (prodSuffix.test(path)) {
    path = path.replace(prodSuffix, '');
    const fixed = `${installerOrigin}${path}`;
    findings.push({
      id: 'url.ends-with-prod',
      severity: 'error',
      path: text,
      message: `The URL ends in /${DEPOT_ROOT_DIR}: the installer appends /${DEPOT_ROOT_DIR}/... itself and would ask for /${DEPOT_ROOT_DIR}/${DEPOT_ROOT_DIR}/...`,
      installer: 'gets 404 for the catalog and refuses the depot',
      fix: `Give the installer ${fixed} (the rest of this check uses it).`,
    });
  }
  url.pathname = path || '/';
  url.search = '';
  url.hash = '';
  const https = url.protocol === 'https:';
  const host = hostOf(url);
  return {
    url: { base: url, host, port: url.port ? Number(url.port) : https ? 443 : 80, isIp: isIP(host) !== 0, https },
    findings,
  };
}

/** The URL of a web-root-relative path under the depot base. */
export function depotFileUrl(depot: DepotUrl, path: string): string {
  const base = depot.base.href.replace(/\/$/, '');
  return `${base}/${path.split('/').map(encodeURIComponent).join('/')}`;
}
