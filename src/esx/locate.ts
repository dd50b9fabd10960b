import { posix } from 'node:path';
import { ESX_DEPOT } from '../constants.js';

/** An ESX depot found in a tree: its folder, and how it is read. */
export interface LocatedDepot {
  /** Its folder, relative to the tree ('' for the tree itself). */
  folder: string;
  /** An online depot or offline bundle, read from its root index; or UMDS's patch store, whose own index is not published. */
  kind: 'index' | 'umds';
  /** Tree-relative path of the root index, or of UMDS's consolidated index. */
  index: string;
}

const isRootIndex = (file: string): boolean => (ESX_DEPOT.rootIndexNames as readonly string[]).includes(posix.basename(file));

/**
 * The ESX depots among a tree's files: every root index, and every UMDS store (its consolidated
 * index) that no root index stands beside. A depot inside another's folder is part of that one
 * (offline bundles listed under one root index keep their own index.xml), so it is not counted twice.
 */
export function locateDepots(files: readonly string[]): LocatedDepot[] {
  const found: LocatedDepot[] = [];
  for (const file of [...files].sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b))) {
    let depot: LocatedDepot | undefined;
    if (isRootIndex(file)) depot = { folder: posix.dirname(file), kind: 'index', index: file };
    else if (file === ESX_DEPOT.umdsConsolidatedIndex || file.endsWith(`/${ESX_DEPOT.umdsConsolidatedIndex}`)) {
      depot = { folder: posix.dirname(posix.dirname(file)), kind: 'umds', index: file };
    }
    if (!depot) continue;
    const folder = depot.folder === '.' ? '' : depot.folder;
    const inside = found.some((d) => d.folder === '' || folder === d.folder || folder.startsWith(`${d.folder}/`));
    if (!inside) found.push({ ...depot, folder });
  }
  return found;
}
