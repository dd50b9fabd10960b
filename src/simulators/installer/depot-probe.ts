import { DEPOT_PATHS, DEPOT_STATUS, INSTALLER_ERROR_CODES, INSTALLER_MESSAGES, INSTALLER_TLS_MESSAGES, type DepotStatus } from '../../constants.js';
import { INSTALLER_SIM_ERROR_CODES, INSTALLER_REMEDIATIONS } from './literals.js';
import { basicAuthorization, discard, networkErrorCode } from '../../net/index.js';
import { NETWORK_LIMITS } from '../../util/limits.js';
import { TLS_TRUST_ERROR_CODES, TLS_VALIDITY_ERROR_CODES } from '../../util/tls-errors.js';
import { NAME_ERROR, depotAgent, depotRequest, type DepotConnectOptions, type DepotTarget } from './depot-tls.js';
import type { ServiceLog } from './log.js';
import { urlHost } from '../../util/url.js';

export type DepotProbeOutcome = { ok: true } | { ok: false; errorCode: string; status: DepotStatus; message: string; remediation: string; cause: string };

const COMPONENT = 'DepotSettingsService';

export function targetUrl(target: DepotTarget, path: string): string {
  return `${target.https ? 'https' : 'http'}://${urlHost(target.host)}:${target.port}${target.prefix}/${path}`;
}

function errorTextOf(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error ? cause.message : err instanceof Error ? err.message : String(err);
}

/** The simulator's cap on a catalog it reads: a hostile depot cannot exhaust its memory. */
export const MAX_CATALOG_BYTES = 64 * 1024 * 1024;

/** The Authorization header of the offline account; none without a user name. */
export function accountHeaders(account: { username?: string; password?: string }): Record<string, string> {
  return account.username ? { authorization: basicAuthorization(account.username, account.password ?? '') } : {};
}

/** The body as text, or undefined when it is longer than `max` bytes (the rest is not read). */
export async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, max: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > max) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Validates a depot as the installer does when its settings are updated: TLS
 * as depotAgent connects, HEAD of the catalog, then GET of the catalog and its
 * signature over that one connection, with the offline account's credentials
 * (none when no user name is set).
 */
export async function probeDepot(
  target: DepotTarget,
  account: { username?: string; password?: string },
  trustedPems: string[],
  log: ServiceLog,
  opts: DepotConnectOptions,
): Promise<DepotProbeOutcome> {
  const where = `${target.host}:${target.port}`;
  const agent = depotAgent(target, trustedPems, opts);
  const headers = accountHeaders(account);
  try {
    const catalogUrl = targetUrl(target, DEPOT_PATHS.catalog);
    // Kept alive after HEAD as Java's client keeps it.
    const head = await depotRequest(catalogUrl, { method: 'HEAD', headers, agent });
    await discard(head, NETWORK_LIMITS.discardBytes);
    log.write('INFO', COMPONENT, `HEAD ${catalogUrl} -> ${head.statusCode}`);
    const refused = httpRefusal(head.statusCode, catalogUrl, account);
    if (refused) return refused;

    const get = await depotRequest(catalogUrl, { method: 'GET', headers, agent });
    const text = await readCapped(get.body, MAX_CATALOG_BYTES);
    log.write('INFO', COMPONENT, `GET ${catalogUrl} -> ${get.statusCode}`);
    const refusedGet = httpRefusal(get.statusCode, catalogUrl, account);
    if (refusedGet) return refusedGet;
    if (text === undefined) return unreadable(`The catalog at ${catalogUrl} is larger than ${MAX_CATALOG_BYTES} bytes.`);
    if (head.headers['content-length'] !== undefined && head.headers['content-length'] !== get.headers['content-length']) {
      return unreadable(
        `HEAD announced ${String(head.headers['content-length'])} bytes for the catalog and GET sent ${String(get.headers['content-length'])}.`,
      );
    }
    try {
      JSON.parse(text);
    } catch {
      return unreadable(`The catalog at ${catalogUrl} is not JSON.`);
    }

    const sigUrl = targetUrl(target, DEPOT_PATHS.catalogSig);
    const sig = await depotRequest(sigUrl, { method: 'GET', headers, agent });
    await discard(sig, NETWORK_LIMITS.discardBytes);
    log.write('INFO', COMPONENT, `GET ${sigUrl} -> ${sig.statusCode}`);
    const refusedSig = httpRefusal(sig.statusCode, sigUrl, account);
    if (refusedSig) return refusedSig;
    return { ok: true };
  } catch (err) {
    return networkFailure(err, target, where, log);
  } finally {
    agent.destroy();
  }
}

/**
 * The depot's answer as the update's outcome. A refusal of credentials is DEPOT_INVALID_CREDENTIAL
 * even when no user was sent (only the 9.1 `url` form probes without one): 9.1 and 9.1.1 end so
 * when the credentials were put in depotConfiguration, where the service does not read them.
 */
function httpRefusal(status: number, url: string, account: { username?: string }): DepotProbeOutcome | undefined {
  if (status === 200) return undefined;
  if (status === 401 || status === 403) {
    const noUser = !account.username;
    return {
      ok: false,
      errorCode: INSTALLER_ERROR_CODES.depotInvalidCredential,
      status: DEPOT_STATUS.invalidCredential,
      message: noUser
        ? `The depot asks for credentials (HTTP ${status} for ${url}) and no depot user is set.`
        : `Failed to connect to VMware depot with the provided user credentials: the depot answered HTTP ${status} for ${url}.`,
      remediation: INSTALLER_REMEDIATIONS.depotInvalidCredential,
      cause: `HTTP ${status}`,
    };
  }
  return {
    ok: false,
    errorCode: INSTALLER_ERROR_CODES.depotNotAvailable,
    status: DEPOT_STATUS.notAvailable,
    message: `The depot answered HTTP ${status} for ${url}.`,
    remediation: INSTALLER_REMEDIATIONS.depotNotAvailable,
    cause: `HTTP ${status}`,
  };
}

function unreadable(message: string): DepotProbeOutcome {
  return {
    ok: false,
    errorCode: INSTALLER_SIM_ERROR_CODES.depotMetadataUnreadable,
    status: DEPOT_STATUS.unknownFailure,
    message,
    remediation: INSTALLER_REMEDIATIONS.depotNotAvailable,
    cause: message,
  };
}

export function networkFailure(err: unknown, target: DepotTarget, where: string, log: ServiceLog): DepotProbeOutcome {
  const code = networkErrorCode(err) ?? '';
  const text = errorTextOf(err);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    log.write('ERROR', COMPONENT, `Unknown depot host ${target.host}: ${text}`);
    return {
      ok: false,
      errorCode: INSTALLER_ERROR_CODES.depotUnknownHost,
      status: DEPOT_STATUS.unknownHost,
      message: `The depot host ${target.host} cannot be resolved.`,
      remediation: INSTALLER_REMEDIATIONS.depotUnknownHost,
      cause: text,
    };
  }
  const validity = TLS_VALIDITY_ERROR_CODES.has(code);
  // The strict name check is our own (NAME_ERROR); Node's name error does not occur with it.
  const untrusted = TLS_TRUST_ERROR_CODES.has(code) && !validity && code !== 'ERR_TLS_CERT_ALTNAME_INVALID';
  const certificateRefused = TLS_TRUST_ERROR_CODES.has(code) || code === NAME_ERROR;
  const tls = target.https && (certificateRefused || code.startsWith('ERR_SSL') || code === 'EPROTO');
  if (tls) {
    const detail = untrusted ? INSTALLER_TLS_MESSAGES.untrusted : validity ? INSTALLER_TLS_MESSAGES.expired : code === NAME_ERROR ? text : `${code}: ${text}`;
    const alert = certificateRefused ? 'certificate_unknown' : 'handshake_failure';
    log.write('ERROR', COMPONENT, INSTALLER_TLS_MESSAGES.fatalAlert(target.host, target.port, alert, detail));
    return {
      ok: false,
      errorCode: INSTALLER_ERROR_CODES.depotConnectFailure,
      status: DEPOT_STATUS.unknownFailure,
      message: INSTALLER_MESSAGES.depotConnectFailure,
      remediation: INSTALLER_MESSAGES.depotConnectFailureRemediation,
      cause: detail,
    };
  }
  log.write('ERROR', COMPONENT, `Depot ${where} is not reachable: ${code ? `${code} ` : ''}${text}`);
  return {
    ok: false,
    errorCode: INSTALLER_ERROR_CODES.depotNotAvailable,
    status: DEPOT_STATUS.notAvailable,
    message: `The depot at ${where} is not reachable (${code || text}).`,
    remediation: INSTALLER_REMEDIATIONS.depotNotAvailable,
    cause: text,
  };
}
