import { join } from 'node:path';
import { ensureSpace } from '../util/space.js';
import { sizeOf } from './build-inputs.js';
import type { CatalogBinary } from './catalog.js';
import type { PlaceMode } from './place.js';

/**
 * The bytes a build will write: metadata files not already there with their
 * size, and in copy mode every binary not already there with its size (a link
 * takes no room for data). A file of the right size already in place is
 * counted as kept even if its content turns out wrong: that is the next run's
 * business, and over-counting would refuse builds that fit.
 */
export async function buildBytesToWrite(out: string, metadata: Map<string, Buffer>, binaries: CatalogBinary[], mode: PlaceMode): Promise<number> {
  let needed = 0;
  for (const [path, data] of metadata) if ((await sizeOf(join(out, path))) !== data.length) needed += data.length;
  if (mode !== 'copy') return needed;
  for (const binary of binaries) if ((await sizeOf(join(out, binary.path))) !== binary.size) needed += binary.size;
  return needed;
}

/** Stops the build before anything is written when what it will write does not fit where it goes. */
export async function ensureBuildSpace(out: string, metadata: Map<string, Buffer>, binaries: CatalogBinary[], mode: PlaceMode): Promise<void> {
  await ensureSpace(out, await buildBytesToWrite(out, metadata, binaries, mode), 'The build');
}
