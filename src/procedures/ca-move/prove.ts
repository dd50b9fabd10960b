import type { InstallerTarget } from '../../installer/index.js';
import { onEveryConsumer } from './consumers.js';
import { aliasOf } from './trust.js';
import type { CaMoveOptions, ConsumerRow } from './types.js';

/** Prove: each consumer lists the new CA (and, while it is still served, the old one). */
export function proveTrusted(
  targets: InstallerTarget[],
  sha256s: { newCa: string; oldCa?: string },
  opts: CaMoveOptions,
): Promise<Array<ConsumerRow<{ newCaAlias?: string; oldCaAlias?: string }>>> {
  return onEveryConsumer(targets, opts, async (client) => {
    const newCaAlias = await aliasOf(client, sha256s.newCa);
    const oldCaAlias = sha256s.oldCa ? await aliasOf(client, sha256s.oldCa) : undefined;
    return { ok: newCaAlias !== undefined, result: { ...(newCaAlias ? { newCaAlias } : {}), ...(oldCaAlias ? { oldCaAlias } : {}) } };
  });
}
