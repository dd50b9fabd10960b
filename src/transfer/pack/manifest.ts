import { PACK_FORMAT } from '../../constants.js';
import { type PackManifest, type PackSince, type TreeEntry, esxMetadataSha256 } from '../format.js';
import type { DepotRecord } from '../record.js';
import type { Source } from './source.js';
import type { Written } from './volumes.js';

export interface ManifestInput {
  packId: string;
  created: Date;
  volumeSize: number;
  source: Source;
  since?: DepotRecord;
  written: Written;
  /** Files not carried (the other side has them), already in the tree. */
  tree: TreeEntry[];
  removed: string[];
}

/** The manifest: where every byte of every file carried is, and the whole tree of the source; a binary of the wrong content is flagged, not in the tree. */
export function buildManifest(input: ManifestInput): PackManifest {
  const { source, since, written } = input;
  const flagged = new Set(written.wrongChecksum.map((w) => w.path));
  const tree = [...input.tree];
  for (const file of written.packed) {
    if (flagged.has(file.path)) file.catalogMismatch = true;
    else tree.push({ path: file.path, size: file.size, sha256: file.sha256, kind: file.kind });
  }
  tree.sort((a, b) => a.path.localeCompare(b.path));
  return {
    format: PACK_FORMAT.name,
    version: PACK_FORMAT.version,
    packId: input.packId,
    created: input.created.toISOString(),
    volumeSize: input.volumeSize,
    // ESX depots alone are named by their metadata (all of it: a delta carries only what changed), as a depot is by its catalog.
    source:
      source.catalogSha256 === undefined
        ? { esxSha256: esxMetadataSha256(tree) }
        : { catalogSha256: source.catalogSha256, release: source.release ?? '', releases: source.releases },
    ...(since ? { since: sinceOf(since, source.catalogSha256 === undefined) } : {}),
    // Unpack judges the depot on what was chosen: binaries left out are not missing there.
    ...(source.selection ? { selection: source.selection.summary } : {}),
    volumes: written.volumes,
    files: written.packed,
    tree,
    removed: input.removed,
    ...(source.esx ? { esx: source.esx.manifest } : {}),
  };
}

/** What a delta was made against: the base's catalog, or for ESX depots alone the base's ESX metadata, held the same way. */
function sinceOf(since: DepotRecord, esxOnly: boolean): PackSince {
  const base = esxOnly ? { esxSha256: esxMetadataSha256([...since.files.values()]) } : { catalogSha256: since.catalogSha256 };
  return { ...base, kind: since.kind === 'pack' ? 'pack' : 'depot', ...(since.packId ? { packId: since.packId } : {}) };
}
