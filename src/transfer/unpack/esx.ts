import { basename, join } from 'node:path';
import { type EsxDepotReport, verifyEsx } from '../../esx/verify.js';
import { exists } from '../../util/fs.js';
import type { Finding } from '../../util/findings.js';
import { readEsxMetadata } from '../../esx/metadata-zip.js';
import { readFileBounded } from '../../util/fs.js';
import { ESX_LIMITS } from '../../util/limits.js';
import { escapeControlChars } from '../../util/text.js';
import { type PackFile, type PackManifest, esxOnlyOf, esxSinceOf, isEsxKind } from '../format.js';
import { esxSha256OfTree } from '../record.js';
import { usageError } from '../../util/errors.js';
import { sha256Hex, unplaceableName } from '../contents.js';
import type { TargetDepot } from '../target.js';
import { readPieces } from './authority.js';
import { type FailedFile, type Held, placeMetadata } from './placing.js';

/**
 * The ESX metadata is the authority on every VIB, as the catalog is on every binary: the manifest only
 * says where the bytes are. Each metadata zip the manifest names is read (from the pack, else from the
 * depot for a delta that does not carry it) and held to the manifest's SHA-256, and through it to the
 * seal, before any VIB is read; it is opened within the metadata archive's bounds.
 */
export interface EsxAuthority {
  /** The ESX depots' folders. */
  folders: string[];
  /** Every VIB the metadata lists, by path, with the size and SHA-256 it states. */
  vibs: Map<string, { size?: number; sha256?: string }>;
  /** Metadata zips that could not be read, and why. */
  unreadable: string[];
}

async function metadataBytes(media: readonly string[], manifest: PackManifest, root: string, zip: { path: string; size: number }): Promise<Buffer | string> {
  if (zip.size > ESX_LIMITS.metadataZipBytes) return `it is ${zip.size} bytes, more than a metadata zip holds`;
  const carried = manifest.files.find((f) => f.path === zip.path);
  if (carried) return readPieces(media, manifest, carried);
  // A delta that does not carry it: the depot's copy, which must be the one the pack was made with.
  return readFileBounded(join(root, zip.path), ESX_LIMITS.metadataZipBytes, 'metadata zip').catch(() => 'the pack does not carry it and the depot lacks it');
}

/** The metadata of the pack's ESX depots, read and held to the manifest; undefined when the pack carries none. */
export async function readEsxAuthority(media: readonly string[], manifest: PackManifest, root: string): Promise<EsxAuthority | undefined> {
  if (!manifest.esx) return undefined;
  const authority: EsxAuthority = { folders: manifest.esx.depots.map((d) => d.folder), vibs: new Map(), unreadable: [] };
  for (const zip of manifest.esx.metadata) {
    const got = await metadataBytes(media, manifest, root, zip);
    const altered = typeof got !== 'string' && (sha256Hex(got) !== zip.sha256 || manifest.files.some((f) => f.path === zip.path && f.sha256 !== zip.sha256));
    if (typeof got === 'string' || altered) {
      authority.unreadable.push(`${escapeControlChars(zip.path)}: ${typeof got === 'string' ? got : "its bytes are not the manifest's"}`);
      continue;
    }
    try {
      const metadata = await readEsxMetadata(got, zip.path);
      for (const vib of metadata.vibs) if (!authority.vibs.has(vib.path)) authority.vibs.set(vib.path, { size: vib.size, sha256: vib.sha256 });
    } catch (err) {
      authority.unreadable.push(`${escapeControlChars(zip.path)}: ${escapeControlChars((err as Error).message)}`);
    }
  }
  return authority;
}

/**
 * Why a file of an ESX depot is refused before any of it is read: a VIB must be listed by a metadata zip
 * of the pack with the size and SHA-256 the manifest gives, and no other file may be taken for one.
 * Undefined: the file may be read.
 */
export function esxRefusalOf(file: PackFile, authority: EsxAuthority | undefined): string | undefined {
  if (!isEsxKind(file.kind)) return undefined;
  const unplaceable = unplaceableName(basename(file.path));
  if (unplaceable) return unplaceable;
  if (!authority) return 'the manifest names no ESX depot';
  const listed = authority.vibs.get(file.path);
  if (file.kind === 'esx-metadata') {
    if (listed) return 'the ESX metadata lists it as a VIB, the manifest as another file';
    if (file.path.endsWith('.vib')) return 'a VIB file that no metadata zip of the pack lists';
    return undefined;
  }
  const unread = authority.unreadable.length ? ` (not read: ${authority.unreadable.join('; ')})` : '';
  if (!listed) return `no metadata zip of the pack lists it${unread}`;
  if (!listed.sha256) return 'its metadata states no SHA-256: nothing vouches for its bytes';
  if (listed.size !== undefined && listed.size !== file.size) return `its size in the manifest (${file.size}) is not its metadata's (${listed.size})`;
  if (listed.sha256 !== file.sha256) return "its SHA-256 in the manifest is not its metadata's";
  return undefined;
}

/**
 * Whether a pack of ESX depots alone may replace the target's different files: with `force`, or for a delta when the
 * target's ESX depots are the ones it was made against (their metadata hashed as its base's was) or already its
 * source's (a resumed run). A delta is refused anywhere else before anything is written: alone it is not a depot.
 */
export async function mayReplaceEsx(root: string, manifest: PackManifest, force: boolean): Promise<boolean> {
  const base = esxSinceOf(manifest);
  if (force || base === undefined) return force;
  const here = await esxSha256OfTree(root);
  if (here !== undefined && (here === base || here === esxOnlyOf(manifest))) return true;
  throw usageError(
    `${manifest.packId} is a delta of ESX depots made against other ESX depots than ${root} holds (${here === undefined ? 'none' : 'other metadata'}): unpacked there it would not make whole ESX depots.`,
    'Unpack it onto the ESX depots it was made against (the last patch carried there), or unpack a whole pack of them first (packed with `esxOnly`, without `since`); `force` unpacks it anyway.',
  );
}

/** Whether `path` lies in one of the pack's ESX depots' folders. */
export const inEsxFolder = (manifest: PackManifest, path: string): boolean => (manifest.esx?.depots ?? []).some((d) => path.startsWith(`${d.folder}/`));

/**
 * The ESX depots' indexes and metadata zips go in after their VIBs, the root indexes last (what vLCM
 * reads first), as esx mirror writes them; over a depot's own root index only when none of the ESX
 * files failed, so that vLCM never sees an index that names a VIB that is not there.
 */
export async function placeEsxMetadata(
  target: TargetDepot,
  manifest: PackManifest,
  held: Held[],
  failed: readonly FailedFile[],
): Promise<'placed' | 'held' | 'unchanged'> {
  const roots = new Set(manifest.esx!.depots.map((d) => d.index));
  let hadIndex = false;
  for (const index of roots) hadIndex ||= await exists(target.path(index));
  const place = !failed.some((f) => inEsxFolder(manifest, f.path)) || !hadIndex;
  // Metadata zips before the indexes that name them.
  const ordered = [...held].sort((a, b) => Number(a.path.endsWith('.xml')) - Number(b.path.endsWith('.xml')));
  return placeMetadata(target, ordered, place, (path) => roots.has(path));
}

export interface UnpackEsxReport {
  /** Whether their indexes and metadata zips went in; held when VIBs failed and the depot had its own. */
  metadata: 'placed' | 'held' | 'unchanged';
  /** `esx verify`'s verdict on each ESX depot of the tree: its products, complete or what each lacks. */
  depots: EsxDepotReport[];
  findings: Finding[];
}

/** `esx verify`'s checks of the ESX depots as they now are (not `deep`: every VIB was hashed as it was placed). */
export async function esxVerdict(root: string, metadata: UnpackEsxReport['metadata']): Promise<UnpackEsxReport> {
  const verdict = await verifyEsx(root);
  return { metadata, depots: verdict.depots, findings: verdict.findings };
}
