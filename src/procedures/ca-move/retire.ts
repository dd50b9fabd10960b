import type { InstallerTarget } from '../../installer/index.js';
import { onEveryConsumer } from './consumers.js';
import { aliasOf } from './trust.js';
import type { CaMoveOptions, ConsumerRow } from './types.js';

interface RetireResult {
  action: 'removed' | 'absent';
  alias?: string;
}

/** Retire: the old CA removed from every consumer, by the alias its certificate is listed under. */
export function retireOldCa(targets: InstallerTarget[], oldCaSha256: string, opts: CaMoveOptions): Promise<Array<ConsumerRow<RetireResult>>> {
  return onEveryConsumer<RetireResult>(targets, opts, async (client) => {
    const alias = await aliasOf(client, oldCaSha256);
    if (alias === undefined) return { ok: true, result: { action: 'absent' as const } };
    await client.deleteTrusted(alias);
    const still = await aliasOf(client, oldCaSha256);
    return { ok: still === undefined, result: { action: 'removed' as const, alias } };
  });
}
