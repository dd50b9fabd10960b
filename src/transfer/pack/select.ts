import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEPOT_PATHS, DEPOT_ROOT_DIR } from '../../constants.js';
import { describeFsError } from '../../util/errors.js';
import { type TreeEntry, isEsxKind, isMetadataKind } from '../format.js';
import { type DepotFile, sha256Hex } from '../contents.js';
import type { DepotRecord } from '../record.js';
import { type Source, changedWhilePacking } from './source.js';

/** Metadata files up to this size are read into memory once (and hashed there, for a delta); larger ones are streamed. */
const HOLD_METADATA_BYTES = 64 * 1024 * 1024;

/** A file to carry. */
export interface Entry extends DepotFile {
  data?: Buffer;
  /** Known before writing: metadata held in memory, or a binary's catalog checksum. */
  expectedSha256?: string;
}

/** What is carried, and what the other side has already (a delta). */
export interface Selection {
  entries: Entry[];
  /** Files of the depot not carried because the other side has them: already in the tree. */
  tree: TreeEntry[];
  unchanged: { files: number; bytes: number };
  /** Files the other side has that this depot no longer holds. */
  removed: string[];
}

/** Where each kind goes: PROD/'s metadata, the ESX depots' indexes and metadata zips, the binaries, the VIBs. */
const RANK: Record<DepotFile['kind'], number> = { metadata: 0, 'esx-metadata': 1, binary: 2, 'esx-vib': 3 };

/** The catalog and the other metadata first (what a person looks for in volume 1), then the binaries by path. */
const metadataFirst = (a: DepotFile, b: DepotFile) =>
  RANK[a.kind] - RANK[b.kind] || (a.path === DEPOT_PATHS.catalog ? -1 : b.path === DEPOT_PATHS.catalog ? 1 : a.path.localeCompare(b.path));

/**
 * What is carried, in order: every file of the depot but those of the wrong
 * size, the binaries a selection left out and, for a delta, those the other side has.
 */
export async function selectEntries(source: Source, since: DepotRecord | undefined): Promise<Selection> {
  const wrongSize = new Set(source.wrongSize.map((w) => w.path));
  const leftOut = source.selection?.leftOut;
  const files = source.files.filter((f) => !wrongSize.has(f.path) && !(f.kind === 'binary' && leftOut?.has(f.path))).sort(metadataFirst);
  const selection: Selection = { entries: [], tree: [], unchanged: { files: 0, bytes: 0 }, removed: [] };
  for (const file of files) {
    const entry = await entryOf(source, file, since !== undefined);
    const old = since?.files.get(file.path);
    if (old && entry.expectedSha256 !== undefined && old.size === entry.size && old.sha256 === entry.expectedSha256) {
      selection.unchanged.files++;
      selection.unchanged.bytes += entry.size;
      selection.tree.push({ path: file.path, size: entry.size, sha256: entry.expectedSha256, kind: file.kind });
    } else selection.entries.push(entry);
  }
  if (since) {
    // A binary or VIB left out by a choice is still this depot's: not removed on the other side.
    const held = new Set([...files.map((f) => f.path), ...(leftOut ?? []), ...(source.esx ? source.esx.leftOut : [])]);
    selection.removed = [...since.files.values()]
      .filter((f) => !held.has(f.path) && mayRemove(source, f))
      .map((f) => f.path)
      .sort();
  }
  return selection;
}

/**
 * What a delta may remove on the other side is what its manifest may name: PROD/'s files for a depot's pack, and the
 * files of the ESX depots carried. ESX depots left out (or another's folders) are not touched; a delta of the ESX
 * depots alone never removes a file of PROD/.
 */
function mayRemove(source: Source, file: TreeEntry): boolean {
  const folders = source.esx ? source.esx.manifest.depots.map((d) => d.folder) : [];
  if (folders.some((folder) => file.path.startsWith(`${folder}/`))) return isEsxKind(file.kind);
  return source.catalogSha256 !== undefined && !isEsxKind(file.kind) && file.path.startsWith(`${DEPOT_ROOT_DIR}/`);
}

/** A file with what is known of its content before it is written: small metadata read whole, a binary's catalog checksum. */
async function entryOf(source: Source, file: DepotFile, delta: boolean): Promise<Entry> {
  const entry: Entry = { ...file };
  const path = join(source.root, file.path);
  if (isMetadataKind(file.kind) && file.size <= HOLD_METADATA_BYTES) {
    entry.data = await readFile(path).catch((err: unknown) => {
      throw describeFsError(err, path);
    });
    entry.size = entry.data.length;
    entry.expectedSha256 = sha256Hex(entry.data);
    // The catalog carried must be the one the manifest names as the source (and the seal vouches for).
    if (file.path === DEPOT_PATHS.catalog && entry.expectedSha256 !== source.catalogSha256) throw changedWhilePacking(source.root, file.path);
    // So must an ESX metadata zip be the one whose VIBs were held to it.
    const known = file.kind === 'esx-metadata' ? source.checksums.get(file.path) : undefined;
    if (known !== undefined && entry.expectedSha256 !== known) throw changedWhilePacking(source.root, file.path);
  } else if (file.kind !== 'metadata' && source.checksums.has(file.path)) {
    // The catalog's, the ESX metadata's, or a metadata zip's as it was read.
    entry.expectedSha256 = source.checksums.get(file.path)!;
  } else if (delta) {
    // A large metadata file must be hashed to be compared: the one case of a second read.
    entry.expectedSha256 = sha256Hex(await readFile(path));
  }
  return entry;
}
