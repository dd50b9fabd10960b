import { DEPOT_STATUS, INSTALLER_ERROR_CODES, INSTALLER_MESSAGES } from '../constants.js';
import { errorMessage } from '../util/errors.js';
import type { Finding } from '../util/findings.js';
import { type DepotClient, type HttpAnswer, fetchFile } from './http.js';

/** What the installer does with a depot whose TLS it refuses: the depot settings update fails with this error. */
export const TLS_REJECTION = `the depot settings update fails with ${INSTALLER_ERROR_CODES.depotConnectFailure}: "${INSTALLER_MESSAGES.secureProtocolError}"`;

/** The depot user, the Authorization header the check sends (none when withheld or not given), and whether it was withheld. */
export interface Credentials {
  user: string | undefined;
  header: string | undefined;
  withheld: boolean;
}

/** One request of the check; `undefined` when it failed, which is then a finding already. */
export type CheckRequest = (url: string, method: 'HEAD' | 'GET', auth: string | undefined, idPrefix: string, path: string) => Promise<HttpAnswer | undefined>;

/**
 * The check's requests: a network failure (reset, timeout, cut answer) becomes
 * a `<prefix>.failed` finding and `undefined`, so one bad answer never ends the check.
 */
export function failuresAsFindings(client: DepotClient, findings: Finding[]): CheckRequest {
  return async (url, method, auth, idPrefix, path) => {
    try {
      return await fetchFile(client, url, method, auth);
    } catch (err) {
      findings.push(requestFailed(idPrefix, path, method, err));
      return undefined;
    }
  };
}

export function requestFailed(idPrefix: string, path: string, method: string, err: unknown): Finding {
  return {
    id: `${idPrefix}.failed`,
    severity: 'error',
    path,
    message: `${method} ${path} failed: ${errorMessage(err)}.`,
    installer: `reports ${DEPOT_STATUS.notAvailable} or fails the download`,
    fix: "Look at the web server's error log: an answer cut short often means a file it cannot read, or a proxy timeout.",
  };
}

/** A 401: the credentials tell a refused password from a missing or withheld one. */
function unauthorized(path: string, method: string, credentials: Credentials): Finding {
  if (credentials.withheld) {
    return {
      id: 'auth.unchecked',
      severity: 'error',
      path,
      message: `${method} ${path}: the depot asks for credentials (401), which were withheld (auth.withheld): neither they nor what they protect could be checked.`,
    };
  }
  if (credentials.user === undefined) {
    return {
      id: 'auth.required',
      severity: 'error',
      path,
      message: `${method} ${path}: the depot needs credentials (401) and none were given.`,
      installer: `reports ${DEPOT_STATUS.userNotSet} or ${INSTALLER_ERROR_CODES.depotInvalidCredential} unless offlineAccount holds them`,
      fix: "Pass `user` and `password`; configure the same in the installer's offlineAccount.",
    };
  }
  return {
    id: 'auth.rejected',
    severity: 'error',
    path,
    message: `${method} ${path}: the depot refused the credentials of user "${credentials.user}" (401).`,
    installer: `reports ${INSTALLER_ERROR_CODES.depotInvalidCredential}`,
    fix: 'Check the user and password (one account must open all of PROD/); give them to the installer in offlineAccount.',
  };
}

/** What a status other than 200 means. */
export function statusFinding(idPrefix: string, path: string, method: string, status: number, credentials: Credentials): Finding {
  if (status === 401) return unauthorized(path, method, credentials);
  if (status === 404) {
    return {
      id: `${idPrefix}.missing`,
      severity: 'error',
      path,
      message: `${method} ${path}: 404, the file is not there.`,
      installer: idPrefix === 'catalog' ? 'cannot read the catalog and refuses the depot' : 'fails when it needs this file',
      fix: 'Lay out the metadata with `buildDepot`; check that the URL points at the folder that contains PROD/.',
    };
  }
  if (status === 403) {
    return {
      id: `${idPrefix}.forbidden`,
      severity: 'error',
      path,
      message: `${method} ${path}: 403, the server may not read the file.`,
      fix: 'Make the depot files readable by the web server (chmod -R a+rX).',
    };
  }
  return { id: `${idPrefix}.status`, severity: 'error', path, message: `${method} ${path} answered ${status}.`, evidence: { status } };
}
