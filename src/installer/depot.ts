import { isIP } from 'node:net';
import {
  DEPOT_STATUS,
  INSTALLER_DEPOT_URL_PATTERN,
  INSTALLER_ERROR_CODES,
  INSTALLER_MESSAGES,
  INSTALLER_TRUSTED_CERTS_FIELD_SINCE,
  INSTALLER_URL_FIELD_SINCE,
} from '../constants.js';
import { findByFingerprint, readCertificates } from '../cert/certificate.js';
import { splitPemBlocks } from '../cert/pem.js';
import { DepotkitError, EXIT, usageError } from '../util/errors.js';
import { registerSecret } from '../util/scrub.js';
import { versionAtLeast } from '../util/versions.js';
import { InstallerApiError, type InstallerClient } from './client.js';
import type { DepotConfiguration, DepotSettings } from './wire.js';
import { trustedPem } from './trust.js';
import { INSTALLER_DEFAULTS } from './defaults.js';
import { hostOf } from '../util/url.js';

/** Where the depot is and how to log in to it. */
export interface DepotSpec {
  /** `https://host[:port][/prefix]` (or http:// on 9.1); or hostname and port. */
  url?: string;
  hostname?: string;
  port?: number;
  username?: string;
  password?: string;
  /**
   * PEM certificates sent with the settings (9.1.1 and later), which the consumer adds to its
   * trust stores before it validates the depot; refused, before anything is sent, for an earlier one.
   */
  trustedCertificates?: string[];
}

export interface DepotPushOptions {
  /** Push even when the installer already has these settings and reaches the depot. */
  force?: boolean;
  /** How long to wait for the installer to report the depot's status; 60 s by default. */
  waitTimeoutMs?: number;
  pollMs?: number;
  /** The consumer's version as appliance-info answered it, when the caller has read it: not asked again. */
  applianceVersion?: string;
}

/**
 * The offline account sent for an open depot given as hostname and port: the
 * installer requires a user there (DEPOT_USER_NOT_SET otherwise), and any user
 * name and password work when the depot does not enforce Basic auth (the installer's documentation).
 * Over the 9.1 url field an open depot goes without an account.
 */
export const OPEN_DEPOT_ACCOUNT = { username: 'depotkit-open-depot', password: 'not-used-by-an-open-depot' } as const;

export interface DepotPushResult {
  action: 'updated' | 'unchanged';
  ok: boolean;
  status?: string;
  message?: string;
  /** When the installer refused the update: its errorCode. */
  errorCode?: string;
  /** What to do: the installer's remediation, then depotkit's own advice for its errorCode when it has some. */
  fix?: string;
  /** The settings the installer shows afterwards (never a password). */
  settings: DepotSettings;
}

/**
 * Refuses what must not be sent: credentials to a plain-HTTP depot (the installer's documentation:
 * with Basic auth TLS is required, so credentials are not sent in clear text).
 */
export function checkDepotSpec(spec: DepotSpec): void {
  if (spec.url !== undefined) checkDepotUrlForm(spec.url);
  const prodSuffix = spec.url === undefined ? undefined : /^(.*?)\/+PROD\/*$/i.exec(spec.url);
  if (prodSuffix) {
    // The installer appends PROD/... itself: a URL ending in /PROD makes it look for PROD/PROD/.
    throw usageError(`The depot URL ${spec.url} ends in /PROD: the installer wants the folder that contains PROD/.`, `Use \`depotUrl\` ${prodSuffix[1]}`);
  }
  if (spec.username && spec.url !== undefined && /^http:/i.test(spec.url)) {
    throw usageError(
      `Depot credentials go only over HTTPS; ${spec.url} is plain HTTP.`,
      'Serve the depot over HTTPS, or leave out `depotUser` for an open HTTP depot.',
    );
  }
}

/**
 * Refuses, before anything is sent, a depot URL the installer and SDDC Manager refuse: 9.1 wants
 * "a valid URL without query parameters or fragments", 9.1.1 refuses credentials in it (userinfo);
 * credentials belong in the depot account, where they are sent only over HTTPS.
 */
export function checkDepotUrlForm(text: string): void {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return; // Not a URL at all: depotConfiguration says what form it needs.
  }
  const bare = `${url.protocol}//${url.host}${url.pathname}`;
  if (url.username !== '' || url.password !== '')
    throw usageError(
      `The depot URL carries credentials (user:password@): the installer refuses a URL with credentials, and they would be shown wherever the settings are.`,
      `Use \`depotUrl\` ${bare} with \`depotUser\` and its password file.`,
    );
  if (url.search !== '' || text.includes('?'))
    throw usageError(
      `The depot URL ${text} has a query string: the installer wants ${INSTALLER_MESSAGES.depotUrlNoQueryOrFragment}.`,
      `Use \`depotUrl\` ${bare}`,
    );
  if (url.hash !== '' || text.includes('#'))
    throw usageError(
      `The depot URL ${text} has a fragment (#...): the installer wants ${INSTALLER_MESSAGES.depotUrlNoQueryOrFragment}.`,
      `Use \`depotUrl\` ${bare}`,
    );
}

/** Does this depot URL need the 9.1 `url` field (plain HTTP or a path prefix)? */
export function needsUrlField(spec: DepotSpec): boolean {
  if (spec.url === undefined || !INSTALLER_DEPOT_URL_PATTERN.test(spec.url)) return false;
  const url = new URL(spec.url);
  return url.protocol !== 'https:' || url.pathname.replace(/\/+$/, '') !== '';
}

/**
 * The depotConfiguration to send. An https URL at a server's root goes as
 * hostname and port, which every version takes (and the 9.0 spec requires);
 * plain HTTP or a path prefix goes as the 9.1 `url` field, when the installer
 * is 9.1 or later; certificates to trust go along when it is 9.1.1 or later.
 */
export function depotConfiguration(spec: DepotSpec, installerVersion: string | undefined): DepotConfiguration {
  const where = depotLocation(spec, installerVersion);
  const trusted = trustedCertificatesFor(spec, installerVersion);
  return trusted ? { ...where, trustedCertificates: trusted } : where;
}

function depotLocation(spec: DepotSpec, installerVersion: string | undefined): DepotConfiguration {
  if (spec.url === undefined) {
    if (!spec.hostname || !spec.port) throw usageError('Give the depot as a URL, or as a host and a port.');
    return { isOfflineDepot: true, hostname: spec.hostname, port: spec.port };
  }
  if (!INSTALLER_DEPOT_URL_PATTERN.test(spec.url)) throw usageError(`The depot URL ${spec.url} must be http://... or https://host[:port][/prefix].`);
  const url = new URL(spec.url);
  if (!needsUrlField(spec)) return { isOfflineDepot: true, hostname: hostOf(url), port: url.port ? Number(url.port) : INSTALLER_DEFAULTS.depotPort };
  if (installerVersion !== undefined && versionAtLeast(installerVersion, INSTALLER_URL_FIELD_SINCE)) return { isOfflineDepot: true, url: spec.url };
  throw usageError(
    `The installer's version ${installerVersion ?? '(unknown)'} takes the depot as a host and port over HTTPS; ${url.protocol === 'https:' ? 'a path prefix' : 'plain HTTP'} needs ${INSTALLER_URL_FIELD_SINCE} or later.`,
    'Serve the depot at the root of an HTTPS server.',
  );
}

/** The certificates to send with the settings; refused for a consumer older than the API that takes them. */
function trustedCertificatesFor(spec: DepotSpec, installerVersion: string | undefined): string[] | undefined {
  const pems = spec.trustedCertificates;
  if (pems === undefined || pems.length === 0) return undefined;
  if (installerVersion === undefined || !versionAtLeast(installerVersion, INSTALLER_TRUSTED_CERTS_FIELD_SINCE)) {
    throw usageError(
      `The installer's version ${installerVersion ?? '(unknown)'} takes no certificates with its depot settings; that needs ${INSTALLER_TRUSTED_CERTS_FIELD_SINCE} or later.`,
      'Import them with `trustCa` first, then update the depot settings without them.',
    );
  }
  if (pems.some((pem) => splitPemBlocks(pem, 'CERTIFICATE').length === 0))
    throw usageError('Each certificate to send with the depot settings must be a PEM certificate (BEGIN CERTIFICATE).');
  if (spec.url !== undefined && /^http:/i.test(spec.url))
    throw usageError(`Certificates to trust go with an HTTPS depot; ${spec.url} is plain HTTP.`, 'Serve the depot over HTTPS.');
  return pems;
}

/** Does the consumer list every one of `pems` (by SHA-256)? What a re-run with certificates to send checks before it calls the settings unchanged. */
async function listsAll(client: InstallerClient, pems: string[]): Promise<boolean> {
  const { elements } = await client.listTrusted();
  return pems.every((pem) => findByFingerprint(elements, readCertificates(pem)[0]?.fingerprints.sha256, trustedPem).length > 0);
}

function sameDepot(current: DepotSettings, wanted: DepotConfiguration, username: string | undefined): boolean {
  const have = current.depotConfiguration;
  if (!have) return false;
  const sameWhere =
    wanted.url !== undefined ? have.url === wanted.url : have.url === undefined && have.hostname === wanted.hostname && have.port === wanted.port;
  return sameWhere && (current.offlineAccount?.username ?? undefined) === (username || undefined);
}

/**
 * What to do about a refused depot, where the installer's own remediation
 * does not say it (for an untrusted certificate it speaks of credentials).
 */
function refusalHint(errorCode: string | undefined, configuration: DepotConfiguration): string | undefined {
  const where = configuration.url ?? `https://${configuration.hostname ?? '?'}:${configuration.port ?? INSTALLER_DEFAULTS.depotPort}`;
  if (errorCode === INSTALLER_ERROR_CODES.depotConnectFailure) {
    return `The installer cannot verify the depot's certificate: import the CA that issued it (\`trustCa\` \`caPems\` CA-CERT), and make sure its SAN names the depot host (\`checkDepot\` ${where} \`caPems\` CA-CERT).`;
  }
  if (errorCode === INSTALLER_ERROR_CODES.depotInvalidCredential)
    return `The depot refused the credentials: check them with \`checkDepot\` ${where} \`user\` USER \`passwordFile\` FILE.`;
  return undefined;
}

/**
 * Points the installer at the depot and reports the status it then shows.
 * A re-run with the same settings against a depot the installer already
 * reaches, holding every certificate to send, does nothing (the password
 * cannot be compared: use `force` after changing it). When the installer
 * refuses the depot and shows the attempt with a status, the result has ok
 * false, the status and the installer's errorCode; other refusals come back
 * as InstallerApiError.
 */
export async function pushDepot(client: InstallerClient, spec: DepotSpec, opts: DepotPushOptions = {}): Promise<DepotPushResult> {
  checkDepotSpec(spec);
  return pushCheckedDepot(client, spec, opts);
}

/** pushDepot's work on a spec its caller has checked already (`depotConnector`, which checks once for every consumer). */
export async function pushCheckedDepot(client: InstallerClient, spec: DepotSpec, opts: DepotPushOptions = {}): Promise<DepotPushResult> {
  // A consumer may echo the password in its answers: the scrub hides it, however the caller got it.
  registerSecret(spec.password);
  if (spec.hostname && isIP(spec.hostname) === 0 && !/^[A-Za-z0-9.-]+$/.test(spec.hostname)) throw usageError(`"${spec.hostname}" is not a host name.`);
  const versioned = needsUrlField(spec) || (spec.trustedCertificates?.length ?? 0) > 0;
  const version = versioned ? (opts.applianceVersion ?? (await client.applianceInfo()).version) : undefined;
  const configuration = depotConfiguration(spec, version);
  const account = spec.username
    ? { username: spec.username, password: spec.password ?? '' }
    : configuration.url === undefined
      ? { ...OPEN_DEPOT_ACCOUNT }
      : undefined;
  const username = account?.username;
  const current = await client.getDepotSettings();
  if (
    !opts.force &&
    sameDepot(current, configuration, username) &&
    current.offlineAccount?.status === DEPOT_STATUS.connectionSuccessful &&
    (configuration.trustedCertificates === undefined || (await listsAll(client, configuration.trustedCertificates)))
  ) {
    return { action: 'unchanged', ok: true, status: current.offlineAccount.status, message: current.offlineAccount.message, settings: current };
  }
  try {
    await client.putDepotSettings({ ...(account ? { offlineAccount: account } : {}), depotConfiguration: configuration });
  } catch (err) {
    // The installer refused the depot: it keeps the attempt with its status, which is the result.
    if (!(err instanceof InstallerApiError)) throw err;
    const settings = await client.getDepotSettings();
    const status = settings.offlineAccount?.status;
    if (!status || status === DEPOT_STATUS.connectionSuccessful || !sameDepot(settings, configuration, username)) throw err;
    const fix = [err.fix, refusalHint(err.errorCode, configuration)].filter((f) => f !== undefined && f !== '').join(' ');
    return {
      action: 'updated',
      ok: false,
      status,
      message: err.apiMessage ?? settings.offlineAccount?.message,
      errorCode: err.errorCode,
      ...(fix ? { fix } : {}),
      settings,
    };
  }
  const deadline = Date.now() + (opts.waitTimeoutMs ?? INSTALLER_DEFAULTS.depotWaitMs);
  for (;;) {
    const settings = await client.getDepotSettings();
    const status = settings.offlineAccount?.status;
    if (sameDepot(settings, configuration, username) && status) {
      return { action: 'updated', ok: status === DEPOT_STATUS.connectionSuccessful, status, message: settings.offlineAccount?.message, settings };
    }
    if (Date.now() >= deadline) {
      throw new DepotkitError(
        `The installer accepted the depot settings but did not show them with a status within ${Math.round((opts.waitTimeoutMs ?? INSTALLER_DEFAULTS.depotWaitMs) / 1000)} s.`,
        EXIT.problems,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, opts.pollMs ?? 1000));
  }
}
