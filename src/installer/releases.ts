import { INSTALLER_API, INSTALLER_ERROR_CODES } from '../constants.js';
import { DepotkitError, EXIT, errorMessage } from '../util/errors.js';
import type { InstallerClient } from './client.js';
import { isObject, parseErrorBody, type Release } from './wire.js';

/** A release as a consumer lists it once it has synced the depot's metadata. */
export interface ReleaseSummary {
  version: string;
  releaseDate?: string;
  minInstallerVersion?: string;
}

/** What a consumer lists: its releases, in the order it answers them. */
export interface ReleasesResult {
  releases: ReleaseSummary[];
}

/**
 * The releases a consumer offers from its synced depot metadata
 * (`GET /v1/releases`). Before any sync the consumer answers
 * LCM_MANIFEST_NOT_FOUND: said as such, with the step that fixes it.
 */
export async function listReleases(client: InstallerClient): Promise<ReleasesResult> {
  const reply = await client.call('GET', INSTALLER_API.releases);
  if (reply.status === 404 && parseErrorBody(reply.body)?.errorCode === INSTALLER_ERROR_CODES.manifestNotFound) {
    throw new DepotkitError(
      `${client.origin.host} lists no releases: it has synced no depot metadata yet (${INSTALLER_ERROR_CODES.manifestNotFound}).`,
      EXIT.problems,
      'Connect it to the depot and sync (`connectDepot`), or sync the depot it has (`syncDepot`).',
    );
  }
  if (reply.status !== 200 || !isObject(reply.body) || !Array.isArray(reply.body.elements)) throw client.apiError('Listing the releases', reply);
  const releases = (reply.body.elements as unknown[])
    .filter((r): r is Release => isObject(r) && typeof r.version === 'string')
    .map((r) => ({
      version: r.version,
      ...(typeof r.releaseDate === 'string' && r.releaseDate !== '' ? { releaseDate: r.releaseDate } : {}),
      ...(typeof r.minInstallerVersion === 'string' ? { minInstallerVersion: r.minInstallerVersion } : {}),
    }));
  return { releases };
}

/**
 * The versions a consumer lists after a sync, for the sync's report: a
 * failure to list them is told beside the sync, never instead of it.
 */
export async function releasesAfterSync(client: InstallerClient): Promise<{ releases: string[] } | { releasesError: string }> {
  try {
    return { releases: (await listReleases(client)).releases.map((r) => r.version) };
  } catch (err) {
    return { releasesError: errorMessage(err) };
  }
}
