import { ensureTrusted, type InstallerTarget } from '../../installer/index.js';
import { onEveryConsumer } from './consumers.js';
import type { CaMoveOptions, ConsumerRow } from './types.js';

/** Import: the new CA into every consumer that lacks it; the old one stays. */
export function importNewCa(
  targets: InstallerTarget[],
  newCaPem: string,
  opts: CaMoveOptions,
): Promise<Array<ConsumerRow<{ action: string; alias?: string }>>> {
  return onEveryConsumer(targets, opts, async (client) => {
    const [outcome] = await ensureTrusted(client, [newCaPem]);
    return { ok: true, result: { action: outcome!.action, ...(outcome!.alias ? { alias: outcome!.alias } : {}) } };
  });
}
