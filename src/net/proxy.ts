import { BlockList, isIP } from 'node:net';
import { PROXY_ENV } from '../constants.js';
import type { DepotUrl } from '../util/depot-url.js';
import { usageError } from '../util/errors.js';
import { basicAuthorization } from './trust.js';
import { HIDDEN, registerSecret } from '../util/scrub.js';

/**
 * The proxy on the way to the depot. Without `proxy`, the environment names
 * it as curl reads it: `https_proxy`, then `HTTPS_PROXY`, for an https://
 * depot; `http_proxy`, then `HTTP_PROXY`, for an http:// one; `no_proxy`,
 * then `NO_PROXY`, lists the hosts reached without it (whoever named the proxy).
 */
export interface ProxyOptions {
  /** http://host:port, https://host:port, or host:port (http); `''` for none, whatever the environment says. */
  proxy?: string;
  /** The proxy's Basic account; the user and password in the proxy's URL when absent. */
  proxyUser?: string;
  proxyPassword?: string;
  /** Hosts reached without the proxy, written as NO_PROXY lists them; instead of the environment's list. */
  noProxy?: string;
}

/** A proxy the connections go through. */
export interface ProxyRoute {
  /** The proxy, without its user and password. */
  uri: URL;
  /** The proxy as messages and reports show it: its user, never its password. */
  shown: string;
  /** Where it was named: `proxy` (the option) or the variable's name. */
  from: string;
  /** The account the proxy is given, when there is one, and where it was given (`proxyUser`, or where the URL came from). */
  user?: string;
  userFrom?: string;
  authorization?: string;
}

/** A proxy that was named, for the report: `bypassedBy` when the no-proxy list names the depot and it was reached directly. */
export interface ProxyUse {
  url: string;
  /** `proxy` (the option) or the variable's name. */
  from: string;
  /** The no-proxy entry that names the depot, and where it is listed (`noProxy` or the variable's name). */
  bypassedBy?: { entry: string; from: string };
}

export interface ProxyChoice {
  route?: ProxyRoute;
  use?: ProxyUse;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The first of `names` set (and not empty) in `env`. */
function fromEnv(env: Env, names: readonly string[]): { value: string; from: string } | undefined {
  for (const name of names) if (env[name]) return { value: env[name], from: name };
  return undefined;
}

/** Which proxy, if any, the connections to `depot` go through. */
export function chooseProxy(depot: DepotUrl, options: ProxyOptions = {}, env: Env = process.env): ProxyChoice {
  const named = options.proxy !== undefined ? { value: options.proxy, from: 'proxy' } : fromEnv(env, depot.https ? PROXY_ENV.https : PROXY_ENV.http);
  if (!named?.value) return {};
  const uri = parseProxyUrl(named.value, named.from);
  const list = options.noProxy !== undefined ? { value: options.noProxy, from: 'noProxy' } : fromEnv(env, PROXY_ENV.noProxy);
  const entry = list && noProxyEntry(list.value, depot);
  const fromUrl = { user: decoded(uri.username, named), password: registerSecret(decoded(uri.password, named)) };
  uri.username = '';
  uri.password = '';
  const user = options.proxyUser ?? (fromUrl.user || undefined);
  const shown = showProxy(uri, user);
  if (entry) return { use: { url: shown, from: named.from, bypassedBy: { entry, from: list.from } } };
  const password = options.proxyUser !== undefined ? registerSecret(options.proxyPassword ?? '') : fromUrl.password;
  return {
    route: {
      uri,
      shown,
      from: named.from,
      ...(user !== undefined
        ? { user, userFrom: options.proxyUser !== undefined ? 'proxyUser' : named.from, authorization: basicAuthorization(user, password) }
        : {}),
    },
    use: { url: shown, from: named.from },
  };
}

/** `http://alice@proxy:3128`: the proxy with its user, never its password. */
function showProxy(uri: URL, user: string | undefined): string {
  return `${uri.protocol}//${user !== undefined ? `${encodeURIComponent(user)}@` : ''}${uri.host}`;
}

/**
 * `value` with everything between the scheme and its last `@` hidden: for a value that is not a
 * URL. A password written unencoded may hold `/`, `:` or `@`, so no earlier character can be
 * taken for the end of the credentials.
 */
function masked(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/)?.*@/is, (_, scheme: string | undefined) => `${scheme ?? ''}${HIDDEN}@`);
}

/** Where a proxy was named, as its messages say it. */
function namedWhere(from: string): string {
  return from === 'proxy' ? 'The proxy (`proxy`)' : `The proxy in ${from}`;
}

/** A user or password of the proxy's URL, its %-escapes decoded; a bad escape is refused without showing either. */
function decoded(part: string, named: { value: string; from: string }): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw usageError(
      `${namedWhere(named.from)} has a % in its user or password that starts no %-escape (two hex digits): "${masked(named.value)}".`,
      'Write a % in them as %25.',
    );
  }
}

/** A proxy's URL: http:// (the scheme when none is given, as curl takes it) or https://. */
export function parseProxyUrl(value: string, from: string): URL {
  const where = namedWhere(from);
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let uri: URL;
  try {
    uri = new URL(text);
  } catch {
    throw usageError(`${where} is not a URL: "${masked(value)}".`, 'Give it as http://host:port.');
  }
  if (uri.protocol !== 'http:' && uri.protocol !== 'https:')
    throw usageError(`${where} is a ${uri.protocol.slice(0, -1)} proxy; a depot is mirrored through an http:// or https:// proxy only.`);
  if (!uri.hostname) throw usageError(`${where} names no host: "${masked(value)}".`, 'Give it as http://host:port.');
  // An `@` after the host is the end of a password holding `/`, `?` or `#` unencoded: the URL's parser took part of it for the host.
  if (`${uri.pathname}${uri.search}${uri.hash}`.includes('@'))
    throw usageError(
      `${where} has an \`@\` after its host: a user or password holding /, ? or # must be %-encoded: "${masked(value)}".`,
      'Write / as %2F, ? as %3F and # as %23 in them.',
    );
  return uri;
}

/**
 * The entry of a no-proxy list that names the depot, or undefined. As curl
 * reads it: entries apart by commas or spaces; `*` alone names every host; a
 * name matches that host and the hosts under it (`lab.local`, `.lab.local`
 * and `*.lab.local` alike); an address matches that address, and a block
 * (`10.0.0.0/8`) the addresses in it. Beyond curl, as Go and undici read it:
 * an entry with `:port` matches that port only.
 */
export function noProxyEntry(list: string, depot: Pick<DepotUrl, 'host' | 'port' | 'isIp'>): string | undefined {
  if (list.trim() === '*') return '*';
  const host = depot.host.toLowerCase().replace(/\.$/, '');
  for (const entry of list.split(/[\s,]+/).filter(Boolean)) {
    const { name, port } = splitPort(entry);
    if (port !== undefined && port !== depot.port) continue;
    if (depot.isIp ? addressMatches(name, host) : nameMatches(name.toLowerCase(), host)) return entry;
  }
  return undefined;
}

function splitPort(entry: string): { name: string; port?: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { name: bracketed[1]!, ...(bracketed[2] ? { port: Number(bracketed[2]) } : {}) };
  // An IPv6 address (or block) without brackets has no port.
  if (isIP(entry.split('/')[0]!) === 6) return { name: entry };
  const withPort = /^(.+):(\d+)$/.exec(entry);
  return withPort ? { name: withPort[1]!, port: Number(withPort[2]) } : { name: entry };
}

function nameMatches(name: string, host: string): boolean {
  const domain = name.replace(/^\*?\./, '').replace(/\.$/, '');
  return domain !== '' && (host === domain || host.endsWith(`.${domain}`));
}

/** An address or a block of addresses (`10.0.0.0/8`, `fd00::/8`) that holds `address`; the same address however it is written. */
function addressMatches(entry: string, address: string): boolean {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  const [net, bits] = entry.split('/');
  if (!net || isIP(net) !== (family === 'ipv6' ? 6 : 4)) return false;
  const list = new BlockList();
  if (bits === undefined) list.addAddress(net, family);
  else {
    const prefix = Number(bits);
    if (!/^\d+$/.test(bits) || prefix > (family === 'ipv6' ? 128 : 32)) return false;
    list.addSubnet(net, prefix, family);
  }
  return list.check(address, family);
}
