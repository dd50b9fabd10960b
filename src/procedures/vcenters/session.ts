import { CIS_TASK_STATUS, MGMT_APPLIANCE_VERSION_PATH, VCENTER_ROLE } from '../../constants.js';
import { readCaPems } from '../../cert/trust-source.js';
import type { ConsumerIdentity, InstallerTarget, VcenterTask } from '../../installer/index.js';
import { connectMgmt, type MgmtClient } from '../../vcenter/client.js';
import { listedComponents, syncAndWait, syncProblem, type ListedComponent, type VcenterDepotReport } from '../../vcenter/depot.js';
import { isObject } from '../../vcenter/wire.js';

/** What a vCenter row of a new release holds: its depots synced again, and what it then lists. */
export interface VcenterResync {
  sync: VcenterDepotReport['sync'];
  components: ListedComponent[];
  problem?: string;
  fix?: string;
}

/**
 * Logs in to the vCenter of an inventory entry (its certificate or CA in `installerCa`, or
 * `insecure`), names its role and version in `seen` (the appliance's version, when it answers),
 * runs `task` and logs out.
 */
export async function withVcenter<T>(
  target: InstallerTarget,
  seen: ConsumerIdentity,
  password: string,
  timeoutMs: number,
  task: (client: MgmtClient) => Promise<T>,
): Promise<T> {
  const serverCaPems = target.installerCa ? await readCaPems([target.installerCa]) : undefined;
  seen.role = VCENTER_ROLE;
  const client = await connectMgmt({ server: target.url, user: target.user, password, serverCaPems, insecure: target.insecure, requestTimeoutMs: timeoutMs });
  try {
    const version = await client.apiCall('Reading the version', 'GET', MGMT_APPLIANCE_VERSION_PATH).catch(() => undefined);
    if (isObject(version) && typeof version.version === 'string') seen.version = version.version;
    return await task(client);
  } finally {
    await client.close();
  }
}

/**
 * A new release's task on a vCenter: every ESX depot it has synced again (vLCM fetches their
 * metadata anew), the task waited for, and the components it then lists.
 */
export function resyncVcenterDepots(opts: { timeoutMs: number; syncTimeoutMs?: number }): VcenterTask<VcenterResync> {
  return (target, seen, password) =>
    withVcenter(target, seen, password, opts.timeoutMs, async (client) => {
      const sync = await syncAndWait(client, { syncTimeoutMs: opts.syncTimeoutMs });
      const ok = sync.status === CIS_TASK_STATUS.succeeded;
      const problem = ok ? {} : syncProblem(client.origin.origin, 'its ESX depots', sync.messages);
      return { ok, result: { sync, components: await listedComponents(client), ...problem } };
    });
}
