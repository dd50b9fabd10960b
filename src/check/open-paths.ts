import { CHECK_ANONYMOUS_PATHS, UMDS_PATCH_STORE_DIR } from '../constants.js';
import { errorMessage } from '../util/errors.js';
import type { Finding } from '../util/findings.js';
import { type DepotClient, probeStatus } from './http.js';
import { type DepotUrl, depotFileUrl } from '../util/depot-url.js';

/**
 * With credentials given, asks for the paths that clients read without credentials (the known
 * ones and `openPaths`) without them, and says which answer: the vendor's update tool cannot
 * do Basic auth, and upgrades from 5.x read the patch store on the depot.
 */
export async function checkAnonymousPaths(client: DepotClient, depot: DepotUrl, auth: string, openPaths: string[], findings: Finding[]): Promise<void> {
  const known: string[] = [CHECK_ANONYMOUS_PATHS.hcl, CHECK_ANONYMOUS_PATHS.patchStore];
  for (const path of [...new Set([...known, ...openPaths])]) {
    const named = openPaths.includes(path) && !known.includes(path);
    let status: number;
    try {
      status = (await probeStatus(client, depotFileUrl(depot, path), 'GET')).status;
    } catch (err) {
      findings.push({ id: 'open.failed', severity: 'info', path, message: `GET ${path} without credentials failed: ${errorMessage(err)}.` });
      continue;
    }
    const finding = openFinding(path, status) ?? (await closedFinding(client, depot, auth, path, status, named));
    if (finding) findings.push(finding);
  }
}

/** A path that answers without credentials. */
function openFinding(path: string, status: number): Finding | undefined {
  // A server that protects a path asks for credentials whether or not anything is there; a folder that
  // is open is answered without being listed (403 from nginx and Apache, 404 from depotkit serve).
  if (status !== 200 && !(path.endsWith('/') && (status === 403 || status === 404))) return undefined;
  return {
    id: 'open.anonymous',
    severity: 'info',
    path,
    message:
      status === 200
        ? `${path} answers without credentials (200).`
        : `${path} answers without asking for credentials (${status}: the folder itself is not listed).`,
    evidence: { status },
  };
}

/** A path that does not answer without credentials: said of the patch store, and of a path named as open. */
async function closedFinding(client: DepotClient, depot: DepotUrl, auth: string, path: string, status: number, named: boolean): Promise<Finding | undefined> {
  if (status === 401 && path === CHECK_ANONYMOUS_PATHS.patchStore) return closedPatchStore(client, depot, auth, path, status);
  return named ? namedPathFinding(path, status) : undefined;
}

/** The patch store asks for credentials: a warning only when the depot user is shown that it is there. */
async function closedPatchStore(client: DepotClient, depot: DepotUrl, auth: string, path: string, status: number): Promise<Finding> {
  // Only a server that shows the folder to the depot user says it is there (a listing, or 403 for no listing).
  let withAuth: number | undefined;
  try {
    withAuth = (await probeStatus(client, depotFileUrl(depot, path), 'GET', auth)).status;
  } catch {
    withAuth = undefined;
  }
  const present = withAuth === 200 || withAuth === 403;
  return {
    id: 'open.patch-store.auth-required',
    severity: present ? 'warning' : 'info',
    path,
    message: present
      ? `${path} is there but asks for credentials (401): the update tool cannot send them, so upgrades from 5.x that read it fail.`
      : `${path} asks for credentials (401): if this depot is to serve upgrades from 5.x, the update tool reads it without credentials and fails.`,
    evidence: { status, statusWithCredentials: withAuth },
    fix: `Leave it open: \`serveDepot\` <dir> \`openPrefixes\` ${UMDS_PATCH_STORE_DIR} (or switch auth off for that location in the web server).`,
  };
}

/** A path the caller named as open that does not answer without credentials. */
function namedPathFinding(path: string, status: number): Finding {
  return status === 401
    ? {
        id: 'open.path.auth-required',
        severity: 'warning',
        path,
        message: `${path} asks for credentials (401), though named as open.`,
        evidence: { status },
        fix: `Leave it open: \`serveDepot\` <dir> \`openPrefixes\` ${path.replace(/\/$/, '')} (or switch auth off for that location in the web server).`,
      }
    : {
        id: 'open.path.status',
        severity: 'warning',
        path,
        message: `${path} answers ${status} without credentials${status === 403 || status === 404 ? ' (a folder? name it with a trailing /)' : ''}.`,
        evidence: { status },
      };
}
