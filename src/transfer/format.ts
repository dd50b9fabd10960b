import { posix } from 'node:path';
import {
  DEPOT_ROOT_DIR,
  DEPOT_STATE_DIR,
  PACK_FORMAT,
  PACK_PART_DIGITS,
  PACK_PART_SUFFIX,
  PACK_VOLUME_PREFIX,
  PACK_VOLUME_SUFFIX,
  TEMP_PREFIX,
} from '../constants.js';
import { usageError } from '../util/errors.js';
import { describeSchemaErrors } from '../util/schema.js';
import { escapeControlChars, hasControlChars } from '../util/text.js';
import { validatePackManifest } from './manifest-schema.js';
import { esxContentSha256 } from './seal.js';
import { BLOCK, END_OF_ARCHIVE, MAX_MEMBER_DATA, headerBytes, roundUpToBlock } from './tar.js';
import type { SelectionSummary } from './select.js';

/**
 * The pack format (docs/transfer.md): volumes that are POSIX tar archives of
 * depot files under their own paths; a file that crosses a volume's end is
 * stored as part files (`<path>.part-0001`, ...) that `cat` joins. The
 * manifest says where every byte is, so unpack reads volumes by offset.
 */

/** A file of `PROD/` (a binary the catalog names, or metadata), or of an ESX depot (a VIB its metadata lists, or any other file of it). */
export type FileKind = 'binary' | 'metadata' | 'esx-vib' | 'esx-metadata';

export const isEsxKind = (kind: FileKind): boolean => kind === 'esx-vib' || kind === 'esx-metadata';
/** What unpack holds back and places last: everything but binaries and VIBs. */
export const isMetadataKind = (kind: FileKind): boolean => kind === 'metadata' || kind === 'esx-metadata';

/** One stretch of a file stored as one tar member. */
export interface PackPiece {
  /** 1-based volume number. */
  volume: number;
  /** The member's name in the volume: the file's path, or a part name. */
  member: string;
  /** Where the piece starts in the file. */
  fileOffset: number;
  length: number;
  /** Where the piece's data starts in the volume (after its header blocks). */
  dataOffset: number;
}

export interface PackFile {
  path: string;
  size: number;
  sha256: string;
  kind: FileKind;
  /** Modification time of the source, in seconds (also in the tar header). */
  mtime: number;
  pieces: PackPiece[];
  /** A binary whose content differed from the catalog's checksum when packed: carried, never placed. */
  catalogMismatch?: boolean;
}

export interface PackVolume {
  index: number;
  name: string;
  size: number;
  sha256: string;
}

/** A file of the depot the pack was made from, carried or not. */
export interface TreeEntry {
  path: string;
  size: number;
  /** For binaries not carried: the catalog's checksum (not read). */
  sha256: string;
  kind: FileKind;
}

/**
 * The ESX depots a pack carries beside `PROD/`: where they are, the products their vendor indexes list,
 * and every metadata zip their chains name (carried or not: a delta's VIBs are held to the depot's copy).
 */
export interface PackEsx {
  depots: { folder: string; kind: 'index' | 'umds'; index: string }[];
  products: { folder: string; vendor: string; productId: string; version: string; metadata: string }[];
  metadata: { path: string; size: number; sha256: string }[];
}

export interface PackManifest {
  format: typeof PACK_FORMAT.name;
  version: typeof PACK_FORMAT.version;
  packId: string;
  created: string;
  /** Largest volume size asked for. */
  volumeSize: number;
  source: PackSource;
  /** Set for a delta: what the pack was made against. */
  since?: PackSince;
  /** Set for a selective pack: the releases, components and image type chosen, and the binaries and bytes chosen and left out. */
  selection?: SelectionSummary;
  volumes: PackVolume[];
  files: PackFile[];
  /** Every file of the source depot (what a depot holds after unpacking this pack onto its base). */
  tree: TreeEntry[];
  /** Files the base had that the source no longer has (a delta only): left in place by unpack, listed by prune. */
  removed: string[];
  /** The ESX depots carried, when the source has any. */
  esx?: PackEsx;
}

/**
 * What a pack was made from: a depot, named by its catalog (the authority on every binary; the ESX
 * depots beside `PROD/` may come with it), or ESX depots alone, named by the SHA-256 of their
 * metadata (`esxContentSha256`: the indexes and metadata zips, which name every VIB's SHA-256).
 */
export type PackSource = { catalogSha256: string; release: string; releases?: string[] } | { esxSha256: string; releases?: undefined };

/**
 * What a delta was made against: a depot's, by the catalog of its base (null when a pack manifest's tree lacked one);
 * ESX depots' alone, by their base's ESX metadata (`esxMetadataSha256` of its ESX depots), which unpack holds the target's to.
 */
export type PackSince = ({ catalogSha256: string | null } | { esxSha256: string }) & { kind: 'depot' | 'pack'; packId?: string };

/** The ESX metadata's SHA-256 a delta of ESX depots alone was made against; undefined for any other pack. */
export const esxSinceOf = (manifest: Pick<PackManifest, 'since'>): string | undefined =>
  manifest.since && 'esxSha256' in manifest.since ? manifest.since.esxSha256 : undefined;

/** The catalog a pack was made from; undefined for a pack of ESX depots alone. */
export const catalogOf = (manifest: Pick<PackManifest, 'source'>): string | undefined =>
  'catalogSha256' in manifest.source ? manifest.source.catalogSha256 : undefined;

/** The ESX metadata's SHA-256 a pack of ESX depots alone was made from; undefined for a depot's pack. */
export const esxOnlyOf = (manifest: Pick<PackManifest, 'source'>): string | undefined =>
  'esxSha256' in manifest.source ? manifest.source.esxSha256 : undefined;

/** The SHA-256 that names ESX depots' content: their files other than VIBs, each with its SHA-256, by path. */
export const esxMetadataSha256 = (files: readonly { path: string; sha256: string; kind: FileKind }[]): string =>
  esxContentSha256(files.filter((f) => f.kind === 'esx-metadata'));

/** `depot-007-of-017.tar`: zero-padded to at least three digits, so that names sort in order. */
export function volumeName(index: number, count: number): string {
  const width = Math.max(3, String(count).length);
  return `${PACK_VOLUME_PREFIX}${String(index).padStart(width, '0')}-of-${String(count).padStart(width, '0')}${PACK_VOLUME_SUFFIX}`;
}

export function partName(path: string, part: number, width: number): string {
  return `${path}${PACK_PART_SUFFIX}${String(part).padStart(width, '0')}`;
}

/**
 * Files smaller than this (or than an eighth of a volume) move whole to the next volume rather than
 * being split: at most this much room is left unused, and small files stay whole for a person.
 */
const SPLIT_MIN_BYTES = 1024 * 1024;

export interface PlanInput {
  path: string;
  size: number;
}

export interface PlannedMember {
  member: string;
  fileIndex: number;
  fileOffset: number;
  length: number;
  /** Offset of the member's header in the volume. */
  headerOffset: number;
  dataOffset: number;
}

export interface PlannedVolume {
  members: PlannedMember[];
  /** Bytes of the finished volume, end-of-archive blocks included. */
  size: number;
}

/** The usable bytes of a volume: whole blocks, less the end-of-archive blocks. */
export function volumeCapacity(volumeSize: number): number {
  return Math.floor(volumeSize / BLOCK) * BLOCK - END_OF_ARCHIVE;
}

/**
 * Lays files out in volumes of at most `volumeSize` bytes, in order, filling
 * each volume: a file that does not fit in the room left is split there
 * (small files move whole to the next volume instead).
 */
export function planVolumes(files: readonly PlanInput[], volumeSize: number): PlannedVolume[] {
  const capacity = volumeCapacity(volumeSize);
  const splitMin = Math.min(SPLIT_MIN_BYTES, Math.floor(capacity / 8));
  const volumes: PlannedVolume[] = [];
  let current: PlannedVolume = { members: [], size: 0 };
  const close = () => {
    volumes.push({ members: current.members, size: current.size + END_OF_ARCHIVE });
    current = { members: [], size: 0 };
  };
  const add = (member: string, fileIndex: number, fileOffset: number, length: number) => {
    const headerOffset = current.size;
    const dataOffset = headerOffset + headerBytes(member);
    current.members.push({ member, fileIndex, fileOffset, length, headerOffset, dataOffset });
    current.size = dataOffset + roundUpToBlock(length);
  };
  files.forEach((file, fileIndex) => {
    const whole = headerBytes(file.path) + roundUpToBlock(file.size);
    if (file.size <= MAX_MEMBER_DATA && whole <= capacity - current.size) return add(file.path, fileIndex, 0, file.size);
    if (file.size <= MAX_MEMBER_DATA && whole <= capacity && file.size < splitMin) {
      close();
      return add(file.path, fileIndex, 0, file.size);
    }
    // Enough digits that `cat <path>.part-*` joins the parts in order (a shell sorts names as text).
    for (let width = PACK_PART_DIGITS; ; width++) {
      const saved = { members: [...current.members], size: current.size, done: volumes.length };
      let offset = 0;
      let part = 0;
      while (offset < file.size) {
        const name = partName(file.path, part + 1, width);
        const room = Math.floor((capacity - current.size - headerBytes(name)) / BLOCK) * BLOCK;
        if (room < BLOCK) {
          if (current.members.length === 0)
            throw usageError(`A volume of ${volumeSize} bytes cannot hold even one block of ${escapeControlChars(file.path)} after its header.`);
          close();
          continue;
        }
        const length = Math.min(file.size - offset, room, MAX_MEMBER_DATA);
        part++;
        add(name, fileIndex, offset, length);
        offset += length;
      }
      if (String(part).length <= width) return;
      // Too many parts for the width: lay this file out again with wider numbers.
      volumes.length = saved.done;
      current = { members: saved.members, size: saved.size };
    }
  });
  if (current.members.length > 0 || volumes.length === 0) close();
  return volumes;
}

// ------------------------------------------------------------------ manifest checks

/** A plain relative path: no empty, `.` or `..` segment, no leading slash, no control characters. */
function plainPath(path: string): boolean {
  return posix.normalize(path) === path && !path.startsWith('/') && !hasControlChars(path) && !path.split('/').some((s) => s === '..' || s === '.' || s === '');
}

/** A manifest path must stay under PROD/ or in an ESX depot's folder the manifest names: unpack writes there and nowhere else. */
export function checkPackPath(path: unknown, what: string, esxFolders: readonly string[] = []): string {
  if (typeof path !== 'string' || path.length === 0) throw usageError(`The pack manifest has a ${what} without a path.`);
  const shown = escapeControlChars(path);
  if (hasControlChars(path)) throw usageError(`The pack manifest names the ${what} "${shown}", which holds control characters: refused.`);
  const under = [DEPOT_ROOT_DIR, ...esxFolders].some((folder) => path.startsWith(`${folder}/`));
  if (!plainPath(path) || !under) {
    const where = esxFolders.length ? ` or in an ESX depot's folder it names` : '';
    throw usageError(`The pack manifest names the ${what} "${shown}", which is not a plain path under ${DEPOT_ROOT_DIR}/${where}: refused.`);
  }
  if (posix.basename(path).startsWith(TEMP_PREFIX)) throw usageError(`The pack manifest names the temporary file "${shown}": refused.`);
  if (path.split('/').includes(DEPOT_STATE_DIR)) throw usageError(`The pack manifest names "${shown}" in a state folder (${DEPOT_STATE_DIR}/): refused.`);
  return path;
}

/** An ESX depot's folder in a manifest: a plain path, not the tree, not `PROD/` itself, not a state folder. */
function checkEsxFolders(esx: PackEsx | undefined, bad: (what: string) => Error): string[] {
  const folders = (esx?.depots ?? []).map((d) => d.folder);
  for (const folder of folders) {
    if (!plainPath(folder) || folder === DEPOT_ROOT_DIR || folder.split('/').some((s) => s === DEPOT_STATE_DIR || s.startsWith(TEMP_PREFIX)))
      throw bad(`it names "${escapeControlChars(folder)}" as an ESX depot's folder`);
  }
  return folders;
}

/**
 * Parses a pack manifest and checks what unpack relies on: the manifest's
 * shape (its schema), paths under PROD/, pieces that cover each file in order,
 * volumes that exist. Anything else is a usage error (exit 2) naming the manifest.
 */
export function parseManifest(text: string, source: string): PackManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw usageError(`${source} is not valid JSON: ${(err as Error).message}.`);
  }
  const m = value as Partial<PackManifest> | null;
  const bad = (what: string) => usageError(`${source} is not a depotkit pack manifest: ${what}.`);
  if (!m || typeof m !== 'object' || m.format !== PACK_FORMAT.name) throw bad(`its format is not "${PACK_FORMAT.name}"`);
  if (m.version !== PACK_FORMAT.version)
    throw usageError(`${source} is a pack of format version ${String(m.version)}; this depotkit reads version ${PACK_FORMAT.version}.`);
  if (!validatePackManifest(m)) throw bad(describeSchemaErrors(validatePackManifest.errors));
  const manifest = m as PackManifest;
  manifest.volumes.forEach((v, i) => {
    if (v.index !== i + 1) throw bad(`volume ${i + 1} is malformed`);
    if (v.name.includes('/') || v.name.startsWith('.') || hasControlChars(v.name)) throw bad(`volume ${i + 1} has the name "${escapeControlChars(v.name)}"`);
  });
  const esxFolders = checkEsxFolders(manifest.esx, bad);
  const seen = new Set<string>();
  for (const f of manifest.files) {
    checkPackPath(f.path, 'file', esxFolders);
    // The ESX rules (a VIB held to its metadata) apply to every file of an ESX depot's folder, and to nothing else.
    if (esxFolders.some((folder) => f.path.startsWith(`${folder}/`)) !== isEsxKind(f.kind))
      throw bad(`${escapeControlChars(f.path)} is of kind ${f.kind} ${isEsxKind(f.kind) ? 'outside' : 'in'} an ESX depot's folder`);
    if (seen.has(f.path)) throw bad(`${escapeControlChars(f.path)} is listed twice`);
    seen.add(f.path);
    checkPieces(f, manifest.volumes, bad);
  }
  checkEsxOnly(manifest, esxFolders, bad);
  checkNesting(manifest.files, bad);
  checkOverlaps(manifest.files, bad);
  for (const t of manifest.tree) checkPackPath(t.path, 'tree entry', esxFolders);
  for (const r of manifest.removed) checkPackPath(r, 'removed file', esxFolders);
  for (const m of manifest.esx?.metadata ?? []) checkPackPath(m.path, 'ESX metadata zip', esxFolders);
  return manifest;
}

/**
 * A pack of ESX depots alone carries nothing else (no choice of binaries), and the metadata its source names: its
 * tree's (a delta carries only what changed), each metadata file carried or named held to it. A delta of them names
 * the ESX metadata it was made against, and removes nothing outside their folders; a depot's delta names a catalog.
 */
function checkEsxOnly(manifest: PackManifest, esxFolders: readonly string[], bad: (what: string) => Error): void {
  const esxSha256 = esxOnlyOf(manifest);
  if (esxSha256 === undefined) {
    if (manifest.since && !('catalogSha256' in manifest.since)) throw bad("it is a depot's delta and names no catalog it was made against");
    return;
  }
  if (!manifest.esx) throw bad('it names ESX depots as its source and carries none');
  if (manifest.selection) throw bad('a pack of ESX depots alone is not a choice of binaries');
  if (manifest.since && esxSinceOf(manifest) === undefined) throw bad('it is a delta of ESX depots alone and names no ESX metadata it was made against');
  const other = manifest.files.find((f) => !isEsxKind(f.kind));
  if (other) throw bad(`it holds ESX depots alone and carries ${escapeControlChars(other.path)}`);
  if (esxMetadataSha256(manifest.tree) !== esxSha256) throw bad('it names other ESX metadata as its source than its tree holds');
  const tree = new Map(manifest.tree.map((t) => [t.path, t.sha256]));
  const metadata = [...manifest.files.filter((f) => f.kind === 'esx-metadata'), ...manifest.esx.metadata];
  const astray = metadata.find((f) => tree.get(f.path) !== f.sha256);
  if (astray) throw bad(`it names ${escapeControlChars(astray.path)} with other content than its tree holds`);
  const outside = manifest.removed.find((r) => !esxFolders.some((folder) => r.startsWith(`${folder}/`)));
  if (outside) throw bad(`it holds ESX depots alone and removes ${escapeControlChars(outside)}`);
}

/** The pieces of a file cover it in order, each inside a volume of the pack. */
function checkPieces(f: PackFile, volumes: readonly PackVolume[], bad: (what: string) => Error): void {
  let offset = 0;
  for (const p of f.pieces) {
    if (p.volume > volumes.length || p.fileOffset !== offset) throw bad(`the pieces of ${escapeControlChars(f.path)} do not cover it in order`);
    if (p.dataOffset + p.length > volumes[p.volume - 1]!.size) throw bad(`a piece of ${escapeControlChars(f.path)} lies past the end of its volume`);
    offset += p.length;
  }
  if (offset !== f.size || (f.size > 0 && f.pieces.length === 0)) throw bad(`the pieces of ${escapeControlChars(f.path)} do not add up to its size`);
}

/** A file cannot also be a folder of another: `X` and `X/child` would fail half way through, after files were placed. */
function checkNesting(files: readonly PackFile[], bad: (what: string) => Error): void {
  const paths = new Set(files.map((f) => f.path));
  for (const f of files) {
    for (let at = f.path.indexOf('/'); at >= 0; at = f.path.indexOf('/', at + 1)) {
      const folder = f.path.slice(0, at);
      if (paths.has(folder)) throw bad(`it names ${escapeControlChars(folder)} as a file and as the folder of ${escapeControlChars(f.path)}`);
    }
  }
}

/** Two pieces over the same bytes of a volume: a pack never writes that; it would feed one file's bytes to another. */
function checkOverlaps(files: readonly PackFile[], bad: (what: string) => Error): void {
  const byVolume = new Map<number, { start: number; end: number; path: string }[]>();
  for (const f of files) {
    for (const p of f.pieces) {
      if (p.length === 0) continue;
      let list = byVolume.get(p.volume);
      if (!list) byVolume.set(p.volume, (list = []));
      list.push({ start: p.dataOffset, end: p.dataOffset + p.length, path: f.path });
    }
  }
  for (const list of byVolume.values()) {
    list.sort((a, b) => a.start - b.start);
    for (let i = 1; i < list.length; i++) {
      if (list[i]!.start < list[i - 1]!.end)
        throw bad(`pieces of ${escapeControlChars(list[i - 1]!.path)} and ${escapeControlChars(list[i]!.path)} lie over the same bytes of a volume`);
    }
  }
}

/** Whether text looks like a pack manifest (for commands that take a depot, an archive or a manifest). */
export function looksLikeManifest(head: string): boolean {
  return head.trimStart().startsWith('{') && head.includes(`"${PACK_FORMAT.name}"`);
}
