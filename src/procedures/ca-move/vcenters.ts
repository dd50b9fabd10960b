import { CIS_TASK_STATUS, VCENTER_ROLE } from '../../constants.js';
import { readCertificate, sha256Fingerprint } from '../../cert/index.js';
import { anchorsChain, type InstallerTarget, type UntrustOutcome } from '../../installer/index.js';
import { servedChainOf } from '../../installer/depot-chain.js';
import { DepotkitError, EXIT } from '../../util/errors.js';
import { syncAndWait } from '../../vcenter/depot.js';
import { ensureTrustedChain, removeTrustedChains } from '../../vcenter/trust.js';
import { reachText } from './reach.js';
import type { RetireInput } from './retire.js';
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

/**
 * The old CA out of each vCenter's trusted root chains, once every consumer validated the depot on the
 * new certificate: by the one removal `vcenter trust --remove` makes, which keeps every chain holding a
 * certificate that anchors the chain the depot serves now (read once, as the consumers are shown it).
 * A chain that cannot be read proves nothing: every vCenter then keeps the old CA, and its row fails.
 * The row's result is the installers' (the chains removed as its aliases).
 */
export async function retireOnVcenters(
  sessions: ConsumerSessions,
  targets: InstallerTarget[],
  input: RetireInput,
): Promise<Array<ConsumerRow<UntrustOutcome[]>>> {
  if (targets.length === 0) return [];
  const served = await servedChainOf(new URL(input.reach.origin), input.timeoutMs, input.reach.serverName);
  const old = { subject: readCertificate(input.oldCaPem).subject, sha256: sha256Fingerprint(input.oldCaPem) };
  const rows = await sessions.vcenters(targets, async (client): Promise<{ ok: boolean; result: UntrustOutcome[] }> => {
    if ('unread' in served) {
      throw new DepotkitError(
        `The chain the depot at ${reachText(input.reach)} serves cannot be read from here (${served.unread}), so nothing proves that ${old.subject} does not anchor it: nothing was removed.`,
        EXIT.problems,
        'Run the move again once the depot answers.',
      );
    }
    const keep = {
      holds: (pem: string) => anchorsChain(pem, served.chain),
      why: `anchors the chain the depot at ${reachText(input.reach)} serves now`,
      fix: 'Give as `oldCa` the CA the depot was served under before the move.',
    };
    const { chains, changed } = await removeTrustedChains(client, [input.oldCaPem], { keep });
    return { ok: true, result: [{ ...old, action: changed ? 'removed' : 'absent', aliases: chains }] };
  });
  // A vCenter that could not be reached (or refused the log-in) says nothing of what to do: the re-run is the way.
  const fix = (url: string) => `Check that ${url} answers and takes the inventory's user, then run the move again: it removes the old CA where it is left.`;
  return rows.map((r) => (r.ok || r.error?.fix ? r : { ...r, error: { ...r.error!, fix: fix(r.url) } }));
}
