import { basename } from 'node:path';
import { DEPOT_PATHS, TEMP_PREFIX } from '../../constants.js';
import { type Catalog, CatalogError, catalogBinaries } from '../../depot/catalog.js';
import { DepotkitError, EXIT, describeFsError, usageError } from '../../util/errors.js';
import { PACK_LIMITS } from '../../util/limits.js';
import { escapeControlChars } from '../../util/text.js';
import { type PackFile, type PackManifest, catalogOf } from '../format.js';
import { inComponentFolder, isComponentMetadata, parseTransferCatalog, sha256Hex, unplaceableName } from '../contents.js';
import { readAt } from '../../util/chunked-io.js';
import { openVolume } from './media.js';

/**
 * The catalog is the authority on every binary: the manifest only says where
 * the bytes are. The pack's own catalog is read (and held to the manifest,
 * and through it to the seal) before anything is placed; a delta that does
 * not carry one is checked against the depot's, when that is the catalog the
 * pack was made from.
 */
export type PackCatalog = { state: 'carried'; bytes: Buffer; catalog: Catalog } | { state: 'unreadable'; reason: string } | { state: 'not-carried' };

export interface Authority {
  /** Where the catalog came from. */
  from: 'pack' | 'depot';
  named: Map<string, { size: number; sha256: string }>;
}

const refuseWhole = (message: string) => new DepotkitError(`${message}; nothing was placed.`, EXIT.problems, 'Get the pack again from the packing site.');

/** Reads a file of the pack whole from its pieces (the catalog: small, and in the first volume). */
export async function readPieces(media: readonly string[], manifest: PackManifest, file: PackFile): Promise<Buffer | string> {
  const parts: Buffer[] = [];
  for (const piece of file.pieces) {
    const name = manifest.volumes[piece.volume - 1]!.name;
    const volume = await openVolume(media, name);
    if (volume.state === 'absent') return `volume ${name} is missing`;
    if (volume.state === 'refused') return `${volume.path} ${volume.reason}`;
    try {
      const data = await readAt(volume.handle, piece.dataOffset, piece.length);
      if (data.length !== piece.length) return `volume ${name} ends early`;
      parts.push(data);
    } catch (err) {
      throw describeFsError(err, volume.path);
    } finally {
      await volume.handle.close();
    }
  }
  return Buffer.concat(parts);
}

/** The pack's catalog, read from its volume and checked against the manifest before anything is placed. */
export async function readPackCatalog(media: readonly string[], manifest: PackManifest): Promise<PackCatalog> {
  const entry = manifest.files.find((f) => f.path === DEPOT_PATHS.catalog);
  if (!entry) return { state: 'not-carried' };
  if (entry.sha256 !== catalogOf(manifest)) throw refuseWhole('The pack manifest names one catalog as its source and carries another');
  if (entry.size > PACK_LIMITS.catalogBytes)
    throw refuseWhole(`The pack's catalog is ${entry.size} bytes, more than a catalog holds (${PACK_LIMITS.catalogBytes})`);
  const got = await readPieces(media, manifest, entry);
  if (typeof got === 'string') return { state: 'unreadable', reason: got };
  if (sha256Hex(got) !== entry.sha256) return { state: 'unreadable', reason: `its bytes in the volumes are not the manifest's (damaged)` };
  try {
    return { state: 'carried', bytes: got, catalog: parseTransferCatalog(got.toString('utf8'), `the pack's ${DEPOT_PATHS.catalog}`) };
  } catch (err) {
    if (err instanceof CatalogError) throw refuseWhole(err.message.replace(/\.$/, ''));
    throw err;
  }
}

/**
 * A small metadata file of the pack (the release manifest), read whole and
 * held to the manifest's SHA-256; undefined when the pack does not carry it,
 * or it is larger than `max`, or its bytes cannot be read or are not the manifest's.
 */
export async function readPackText(media: readonly string[], manifest: PackManifest, path: string, max: number): Promise<string | undefined> {
  const entry = manifest.files.find((f) => f.path === path);
  if (!entry || entry.size > max) return undefined;
  const got = await readPieces(media, manifest, entry);
  return typeof got !== 'string' && sha256Hex(got) === entry.sha256 ? got.toString('utf8') : undefined;
}

function namedBy(catalog: Catalog): Authority['named'] {
  return new Map(catalogBinaries(catalog).map((b) => [b.path, { size: b.size, sha256: b.checksum }]));
}

/**
 * The catalog every binary is held to: the pack's; else the depot's when it
 * is the one the pack was made from. Undefined when the pack's cannot be read
 * (its volume is missing or damaged) and the depot has no such catalog: then
 * no binary is placed.
 */
export function authorityFor(pack: PackCatalog, current: { bytes: Buffer; catalog: Catalog } | undefined, manifest: PackManifest): Authority | undefined {
  // ESX depots alone: no binary to hold to a catalog (the manifest carries none), each VIB held to its metadata.
  if (catalogOf(manifest) === undefined) return undefined;
  if (pack.state === 'carried') return { from: 'pack', named: namedBy(pack.catalog) };
  if (current && sha256Hex(current.bytes) === catalogOf(manifest)) return { from: 'depot', named: namedBy(current.catalog) };
  if (pack.state === 'not-carried')
    throw usageError(
      `${manifest.packId} does not carry its catalog, and the depot's catalog is not the one it was made from: its binaries cannot be checked.`,
      'Unpack it onto the depot it was made against.',
    );
  return undefined;
}

/** Paths whose base name starts like a temporary file's but that a catalog names: never cleared as temporary files. */
export function tempLikeNames(...catalogs: (Catalog | undefined)[]): Set<string> {
  const names = new Set<string>();
  for (const catalog of catalogs) {
    if (!catalog) continue;
    for (const b of catalogBinaries(catalog)) if (basename(b.path).startsWith(TEMP_PREFIX)) names.add(b.path);
  }
  return names;
}

/**
 * Why a file of the manifest is refused before any of it is read, held to
 * the catalog: a binary must be named by it with its size and SHA-256, and a
 * file in a component folder that it does not name is never placed (a pack
 * carries none). Undefined: the file may be read.
 */
export function refusalOf(file: PackFile, authority: Authority | undefined, unreadable: string | undefined): string | undefined {
  const shown = escapeControlChars(file.path);
  const unplaceable = unplaceableName(basename(file.path));
  if (unplaceable) return unplaceable;
  const looseInComponent = inComponentFolder(file.path) && !isComponentMetadata(file.path);
  if (!authority) {
    if (file.kind === 'binary' || looseInComponent) return `not checked: the pack's catalog could not be read (${unreadable ?? 'no catalog'})`;
    return undefined;
  }
  const named = authority.named.get(file.path);
  if (!named) {
    if (file.kind === 'binary') return 'the catalog does not name it';
    if (looseInComponent) return 'it lies in a component folder and the catalog does not name it';
    return undefined;
  }
  if (file.kind !== 'binary') return `the catalog names ${shown} as a binary, the manifest as metadata`;
  if (file.size !== named.size) return `its size in the manifest (${file.size}) is not the catalog's (${named.size})`;
  if (file.sha256 !== named.sha256) return "its SHA-256 in the manifest is not the catalog's";
  return undefined;
}
