import { isIP } from 'node:net';
import {
  INSTALLER_DEPOT_URL_PATTERN,
  INSTALLER_MESSAGES,
  INSTALLER_TRUSTED_CERTS_FIELD_SINCE,
  INSTALLER_URL_FIELD_SINCE,
  INSTALLER_URL_USERINFO_REFUSED_SINCE,
} from '../../constants.js';
import { INSTALLER_PASSWORD_MASK, INSTALLER_SIM_ERROR_CODES } from './literals.js';
import { ApiError, badRequest } from './api-error.js';
import type { DepotTarget } from './depot-tls.js';
import { BadCertificate, parseCertificates, pemOf } from './trust-store.js';
import { isObject } from './wire.js';
import { versionAtLeast } from '../../util/versions.js';
import { bareHost, hostOf } from '../../util/url.js';

/** `DepotConfiguration.url`'s maxLength in the 9.1 API document. */
const URL_MAX_LENGTH = 2048;

/** The depot settings a PUT asks for, read as the installer reads them. */
export interface DepotSettingsRequest {
  target: DepotTarget;
  account: { username?: string; password?: string };
  /** The 9.1 `url` as it is kept and shown: a password written into it is masked. */
  url?: string;
  /** A password written into the `url` (9.1.0 takes such a url and does not use it): never logged. */
  urlSecrets: string[];
  /** PEM certificates trusted for this depot only (9.1.1 and later). */
  trustedCertificates: string[];
}

const invalid = (message: string) => new ApiError(400, INSTALLER_SIM_ERROR_CODES.invalidDepotSettings, message);

/**
 * A boolean as the installer's JSON mapper (Jackson) reads one: a JSON boolean,
 * or the strings "true"/"false" in any case; anything else is not a boolean.
 */
function coerceBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
  return undefined;
}

/** An int as Jackson reads one: a JSON number (fractions truncated) or a string of digits ("443"). */
function coerceInteger(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === 'string' && /^[+-]?\d{1,10}$/.test(value.trim())) return Number(value.trim());
  return undefined;
}

const DNS_NAME = /^(?=.{1,253}\.?$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

/**
 * A depot hostname: a DNS name or an IP address (IPv6 with or without
 * brackets). A user, a path, a fragment, a ":port" suffix, whitespace or
 * control characters make it something else, which the installer refuses.
 */
function depotHostOf(value: string): string | undefined {
  const bare = bareHost(value);
  if (isIP(bare) !== 0) return bare;
  return DNS_NAME.test(value) ? value : undefined;
}

/** `offlineAccount`: absent or null is no account; an empty user name is none. */
function accountOf(raw: unknown): DepotSettingsRequest['account'] {
  if (raw !== undefined && raw !== null && !isObject(raw)) throw invalid('offlineAccount must be an object.');
  return {
    username: typeof raw?.username === 'string' && raw.username !== '' ? raw.username : undefined,
    password: typeof raw?.password === 'string' ? raw.password : undefined,
  };
}

/** `depotConfiguration.trustedCertificates`: PEM texts, each holding one or more certificates. */
function depotTrustedCertificates(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
    throw invalid('depotConfiguration.trustedCertificates must be a list of PEM certificates.');
  try {
    return value.flatMap((pem: string) => parseCertificates(pem).map(pemOf));
  } catch (err) {
    if (err instanceof BadCertificate) throw invalid(`depotConfiguration.trustedCertificates: ${err.message}`);
    throw err;
  }
}

/**
 * What 9.1 refuses in a `url` the pattern lets through: a query or a fragment (even an empty
 * one), and from 9.1.1 credentials before the host, which belong in offlineAccount.
 */
function refuseUrlParts(value: string, version: string): void {
  if (value.includes('?') || value.includes('#')) throw invalid(`depotConfiguration.url must be ${INSTALLER_MESSAGES.depotUrlNoQueryOrFragment}.`);
  const authority = /^https?:\/\/([^/]*)/i.exec(value)?.[1] ?? '';
  if (authority.includes('@') && versionAtLeast(version, INSTALLER_URL_USERINFO_REFUSED_SINCE)) {
    throw invalid(`depotConfiguration.url has a ${INSTALLER_MESSAGES.depotUrlUserinfo}: give the depot user and password in offlineAccount.`);
  }
}

/** The url with the password of a `user:password@` masked, and that password as given and decoded. */
function urlShown(value: string): { url: string; urlSecrets: string[] } {
  const userinfo = /^(https?:\/\/[^/@:]*:)([^/@]*)@/i.exec(value);
  if (!userinfo?.[2]) return { url: value, urlSecrets: [] };
  let decoded = userinfo[2];
  try {
    decoded = decodeURIComponent(decoded);
  } catch {
    // Not percent-encoded text: the password as given is the one to hide.
  }
  return { url: `${userinfo[1]}${INSTALLER_PASSWORD_MASK}@${value.slice(userinfo[0].length)}`, urlSecrets: [userinfo[2], decoded] };
}

/** The 9.1 `url` field: where the depot is, over http or https, with a path prefix. */
function urlTarget(value: unknown, account: DepotSettingsRequest['account'], version: string): DepotTarget {
  if (typeof value !== 'string' || !INSTALLER_DEPOT_URL_PATTERN.test(value)) throw invalid('depotConfiguration.url must be an http:// or https:// URL.');
  if (value.length > URL_MAX_LENGTH) throw invalid(`depotConfiguration.url must be at most ${URL_MAX_LENGTH} characters, not ${value.length}.`);
  refuseUrlParts(value, version);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid('depotConfiguration.url must be an http:// or https:// URL.');
  }
  const https = url.protocol === 'https:';
  // With Basic auth TLS is required, so credentials never go in clear text.
  if (!https && (account.username !== undefined || account.password !== undefined)) {
    throw invalid('Depot credentials go only over HTTPS: an http:// depot url takes no offlineAccount user or password.');
  }
  return {
    https,
    host: hostOf(url),
    port: url.port ? Number(url.port) : https ? 443 : 80,
    prefix: url.pathname.replace(/\/+$/, ''),
  };
}

/** Hostname and port (every version): the depot over HTTPS at its root. */
function hostTarget(conf: Record<string, unknown>): DepotTarget {
  if (typeof conf.hostname !== 'string' || conf.hostname.trim() === '') throw invalid('depotConfiguration.hostname is required.');
  const host = depotHostOf(conf.hostname);
  if (host === undefined) throw invalid(`depotConfiguration.hostname must be a host name or an IP address, not "${conf.hostname}".`);
  const port = coerceInteger(conf.port);
  if (port === undefined || port < 1 || port > 65535) throw invalid('depotConfiguration.port must be a TCP port (1 to 65535).');
  return { https: true, host, port, prefix: '' };
}

/**
 * Checks a PUT body and says where the depot is: hostname and port, or (9.1)
 * `url`. Scalars are coerced and unknown fields ignored as the installer's
 * JSON mapper does; fields of later versions are unknown to earlier ones.
 */
export function readDepotSettings(body: unknown, version: string): DepotSettingsRequest {
  if (!isObject(body)) throw badRequest('The depot settings must be a JSON object.');
  const account = accountOf(body.offlineAccount);
  const conf = body.depotConfiguration;
  if (!isObject(conf)) throw invalid('depotConfiguration is required.');
  const offline = coerceBoolean(conf.isOfflineDepot);
  if (conf.isOfflineDepot !== undefined && offline === undefined) throw invalid('depotConfiguration.isOfflineDepot must be a boolean.');
  if (offline !== true) throw invalid('Only offline depots are supported here: depotConfiguration.isOfflineDepot must be true.');
  const trustedCertificates = versionAtLeast(version, INSTALLER_TRUSTED_CERTS_FIELD_SINCE) ? depotTrustedCertificates(conf.trustedCertificates) : [];
  if (conf.url !== undefined && conf.url !== null && versionAtLeast(version, INSTALLER_URL_FIELD_SINCE)) {
    const target = urlTarget(conf.url, account, version);
    return { target, account, ...urlShown(conf.url as string), trustedCertificates };
  }
  return { target: hostTarget(conf), account, urlSecrets: [], trustedCertificates };
}
