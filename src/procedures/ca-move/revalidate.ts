import { pushDepot, type DepotPushResult, type DepotSpec, type InstallerTarget } from '../../installer/index.js';
import type { ConsumerSessions } from './sessions.js';
import type { ConsumerRow } from './types.js';

/**
 * Revalidate: every consumer validates the depot again, by the depot settings
 * update the client sends (the installer validates the depot before it answers).
 */
export function revalidate(
  sessions: ConsumerSessions,
  targets: InstallerTarget[],
  depot: DepotSpec,
  last: boolean,
): Promise<Array<ConsumerRow<Pick<DepotPushResult, 'status' | 'errorCode' | 'message'>>>> {
  return sessions.each(
    targets,
    async (client) => {
      const push = await pushDepot(client, depot, { force: true });
      return {
        ok: push.ok,
        result: {
          ...(push.status ? { status: push.status } : {}),
          ...(push.errorCode ? { errorCode: push.errorCode } : {}),
          ...(push.message ? { message: push.message } : {}),
        },
      };
    },
    { last },
  );
}
