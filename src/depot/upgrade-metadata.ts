import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { VCENTER_UPGRADE_METADATA_DIR, VCENTER_UPGRADE_METADATA_FILES } from '../constants.js';

/**
 * vCenter upgrade metadata: one folder per upgrade, named by a UUID, under
 * PROD/COMP/VCENTER/vmw/, holding a fixed set of files. The catalog does not
 * name them, so whoever copies a depot file by file must find them another way.
 */
const UUID_PATTERN = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const UUID = new RegExp(`^${UUID_PATTERN}$`, 'i');
const UUID_IN_TEXT = new RegExp(UUID_PATTERN, 'gi');

/** The web-root-relative paths an upgrade folder may hold. */
export function upgradeMetadataPaths(uuid: string): string[] {
  return VCENTER_UPGRADE_METADATA_FILES.map((name) => `${VCENTER_UPGRADE_METADATA_DIR}/${uuid}/${name}`);
}

/** Whether `path` is exactly one of those files (a path from elsewhere is checked before it is fetched or written). */
export function isUpgradeMetadataPath(path: string): boolean {
  const prefix = `${VCENTER_UPGRADE_METADATA_DIR}/`;
  if (!path.startsWith(prefix)) return false;
  const [uuid, name, ...rest] = path.slice(prefix.length).split('/');
  return rest.length === 0 && UUID.test(uuid ?? '') && (VCENTER_UPGRADE_METADATA_FILES as readonly string[]).includes(name ?? '');
}

/** The upgrade folders a listing of PROD/COMP/VCENTER/vmw/ names, whatever its format (an HTML index, JSON). */
export function upgradeIdsInListing(text: string): string[] {
  return [...new Set([...text.matchAll(UUID_IN_TEXT)].map((m) => m[0]))].sort();
}

/** The upgrade metadata files a depot holds, sorted. */
export async function listUpgradeMetadata(root: string): Promise<string[]> {
  const found: string[] = [];
  const dir = join(root, VCENTER_UPGRADE_METADATA_DIR);
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (!entry.isDirectory() || !UUID.test(entry.name)) continue;
    const names = new Set((await readdir(join(dir, entry.name), { withFileTypes: true }).catch(() => [])).filter((e) => e.isFile()).map((e) => e.name));
    found.push(...upgradeMetadataPaths(entry.name).filter((p) => names.has(p.slice(p.lastIndexOf('/') + 1))));
  }
  return found.sort();
}
