import type { Catalog } from '../../depot/catalog.js';
import { usageError } from '../../util/errors.js';
import { readCatalogOf, sha256Hex } from '../contents.js';
import { type PackManifest, catalogOf, esxOnlyOf } from '../format.js';
import { mayReplaceEsx } from './esx.js';

export interface Owner {
  current?: { catalog: Catalog; bytes: Buffer };
  /** Files of the depot that differ may be replaced: it is this pack's source (a resumed run) or its base (a delta), or --force. */
  mayReplace: boolean;
}

/** Whose depot `root` is, and whether the pack may go there: a delta alone is not a depot, it belongs on the one it was made against. */
export async function whoseDepot(root: string, manifest: PackManifest, force: boolean): Promise<Owner> {
  const current = await readCatalogOf(root).catch(() => undefined);
  if (esxOnlyOf(manifest) !== undefined) return { current, mayReplace: await mayReplaceEsx(root, manifest, force) };
  const currentSha = current ? sha256Hex(current.bytes) : undefined;
  const ours =
    currentSha !== undefined &&
    (currentSha === catalogOf(manifest) || (manifest.since !== undefined && 'catalogSha256' in manifest.since && currentSha === manifest.since.catalogSha256));
  if (manifest.since && !ours && !force) {
    throw usageError(
      `${manifest.packId} is a delta made against a depot whose catalog is not the one in ${root} (${current ? 'another catalog' : 'no catalog'}): unpacked there it would not make a whole depot.`,
      'Unpack it onto the depot it was made against (the older release), or unpack the full pack of the older release first; `force` unpacks it anyway.',
    );
  }
  return { current, mayReplace: force || ours };
}
