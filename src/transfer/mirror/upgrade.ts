import { VCENTER_UPGRADE_METADATA_DIR } from '../../constants.js';
import { isUpgradeMetadataPath, upgradeIdsInListing, upgradeMetadataPaths } from '../../depot/upgrade-metadata.js';
import { depotFileUrl } from '../../util/depot-url.js';
import { DepotkitError, EXIT } from '../../util/errors.js';
import { isObject, parseJsonOrUndefined } from '../../util/json.js';
import { METADATA_LIMITS, MIRROR_LIMITS } from '../../util/limits.js';
import type { Connection } from './connection.js';
import { fetchSmall } from './metadata.js';

/** How the vCenter upgrade metadata was found: the status of `depotkit serve`, a folder listing, or not at all. */
export type UpgradeMetadataSource = 'status' | 'listing' | 'none';

/**
 * The vCenter upgrade metadata files a server holds, which its catalog does
 * not name: `depotkit serve` lists them in its status (JSON at `/`); another
 * server only when it lists the folder (an autoindex, in HTML or JSON). A
 * listed upgrade folder need not hold every file of the set: what the server
 * has is copied.
 */
export async function findUpgradeMetadata(conn: Connection): Promise<{ source: UpgradeMetadataSource; paths: string[] }> {
  let source: UpgradeMetadataSource = 'none';
  let paths: string[] = [];
  const status = await fetchSmall(conn, '', MIRROR_LIMITS.listingBytes, { accept: 'application/json' });
  const listed = status && parseJsonOrUndefined(status.toString('utf8'));
  if (isObject(listed) && Array.isArray(listed.upgradeMetadata)) {
    source = 'status';
    paths = listed.upgradeMetadata.filter((p): p is string => typeof p === 'string' && isUpgradeMetadataPath(p));
  } else {
    const listing = await fetchSmall(conn, `${VCENTER_UPGRADE_METADATA_DIR}/`, MIRROR_LIMITS.listingBytes);
    if (listing) {
      source = 'listing';
      paths = upgradeIdsInListing(listing.toString('utf8')).flatMap(upgradeMetadataPaths);
    }
  }
  // As many files as a metadata archive may hold at most: a listing of millions is not a depot's.
  if (paths.length > METADATA_LIMITS.maxEntries)
    throw new DepotkitError(
      `${depotFileUrl(conn.depot, VCENTER_UPGRADE_METADATA_DIR)}/ names ${paths.length} vCenter upgrade metadata files, more than the ${METADATA_LIMITS.maxEntries} a metadata archive may hold: not a depot's.`,
      EXIT.problems,
    );
  return { source, paths: [...new Set(paths)] };
}
