import type { Command } from 'commander';
import { registerDiff } from './transfer-diff.js';
import { registerMirror } from './transfer-mirror.js';
import { registerPack } from './transfer-pack.js';
import { registerPrune } from './transfer-prune.js';
import { registerUnpack } from './transfer-unpack.js';

export { formatDiffReport } from './transfer-diff.js';
export { formatMirrorReport } from './transfer-mirror.js';
export { formatPackReport } from './transfer-pack.js';
export { formatPruneReport } from './transfer-prune.js';
export { formatUnpackReport } from './transfer-unpack.js';

/** Registers pack, unpack, mirror, prune and diff under `depot`, in the order of the flow. */
export function registerTransferCommands(depot: Command): void {
  registerPack(depot);
  registerUnpack(depot);
  registerMirror(depot);
  registerPrune(depot);
  registerDiff(depot);
}
