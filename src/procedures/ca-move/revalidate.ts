import { pushDepot, type DepotPushResult, type InstallerTarget } from '../../installer/index.js';
import { onEveryConsumer } from './consumers.js';
import type { CaMoveOptions, ConsumerRow } from './types.js';

/**
 * Revalidate: every consumer validates the depot again, by the depot settings
 * update the client sends (the installer validates the depot before it answers).
 */
export function revalidate(
  targets: InstallerTarget[],
  opts: CaMoveOptions,
): Promise<Array<ConsumerRow<Pick<DepotPushResult, 'status' | 'errorCode' | 'message'>>>> {
  return onEveryConsumer(targets, opts, async (client) => {
    const push = await pushDepot(client, opts.depot, { force: true });
    return {
      ok: push.ok,
      result: {
        ...(push.status ? { status: push.status } : {}),
        ...(push.errorCode ? { errorCode: push.errorCode } : {}),
        ...(push.message ? { message: push.message } : {}),
      },
    };
  });
}
