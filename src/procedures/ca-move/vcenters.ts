import { CIS_TASK_STATUS, VCENTER_ROLE } from '../../constants.js';
import type { InstallerTarget } from '../../installer/index.js';
import { syncAndWait } from '../../vcenter/depot.js';
import { ensureTrustedChain } from '../../vcenter/trust.js';
import type { ImportResult } from './import.js';
import type { ProveResult } from './prove.js';
import type { RevalidateResult } from './revalidate.js';
import type { ConsumerSessions } from './sessions.js';
import type { ConsumerRow } from './types.js';

export const isVcenter = (t: InstallerTarget): boolean => t.role === VCENTER_ROLE;

/** Rows of two passes in the inventory's order. */
export function inOrder<T>(targets: InstallerTarget[], ...parts: Array<Array<ConsumerRow<T>>>): Array<ConsumerRow<T>> {
  const rows = parts.flat();
  return targets.map((t) => rows.find((r) => r.name === t.name)!).filter((r) => r !== undefined);
}

/**
 * The new CA among each vCenter's trusted root chains, before the switch: vLCM trusts only those
 * when it fetches the ESX depot. Added unless a chain holds it already, then proven by listing
 * the chains again (a chain holding it, found by SHA-256).
 */
export async function trustOnVcenters(
  sessions: ConsumerSessions,
  targets: InstallerTarget[],
  newCaPem: string,
): Promise<Array<ConsumerRow<{ imported: ImportResult; proven: ProveResult }>>> {
  return sessions.vcenters(targets, async (client) => {
    const { chains, changed } = await ensureTrustedChain(client, [newCaPem]);
    const proof = await ensureTrustedChain(client, [newCaPem]);
    const imported: ImportResult = { action: changed ? 'imported' : 'already-trusted', ...(chains[0] ? { alias: chains[0] } : {}) };
    return { ok: !proof.changed, result: { imported, proven: proof.changed ? {} : { newCaAlias: proof.chains[0] } } };
  });
}

/** The vCenter's depot check after the switch: a sync of its ESX depots, which vLCM fetches over the new certificate. */
export function syncOnVcenters(sessions: ConsumerSessions, targets: InstallerTarget[]): Promise<Array<ConsumerRow<RevalidateResult>>> {
  return sessions.vcenters(targets, async (client) => {
    const sync = await syncAndWait(client);
    const ok = sync.status === CIS_TASK_STATUS.succeeded;
    return { ok, result: { status: `sync ${sync.status}`, ...(ok ? {} : { message: sync.messages.join(' ') }) } };
  });
}
