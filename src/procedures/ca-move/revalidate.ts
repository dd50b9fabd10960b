import { pushDepot, type DepotPushResult, type DepotSpec, type InstallerTarget } from '../../installer/index.js';
import { caRouteOf, type CaRoute } from './route.js';
import type { ConsumerSessions } from './sessions.js';
import type { ConsumerRow } from './types.js';

export type RevalidateResult = Pick<DepotPushResult, 'status' | 'errorCode' | 'message'> & {
  /** Set when the new CA went with the settings (9.1.1 and later). */
  via?: CaRoute;
};

/**
 * Revalidate: every consumer validates the depot again, by the depot settings
 * update the client sends (the installer validates the depot before it answers).
 * A 9.1.1 or later consumer gets the new CA with it, and never the old one:
 * once retired, it must not come back.
 */
export function revalidate(
  sessions: ConsumerSessions,
  targets: InstallerTarget[],
  depot: DepotSpec,
  newCaPem: string,
  last: boolean,
): Promise<Array<ConsumerRow<RevalidateResult>>> {
  return sessions.each(
    targets,
    async (client, appliance) => {
      const withCa = caRouteOf(appliance.version) === 'depot-settings';
      const spec = withCa ? { ...depot, trustedCertificates: [newCaPem] } : depot;
      const push = await pushDepot(client, spec, { force: true, applianceVersion: appliance.version });
      return {
        ok: push.ok,
        result: {
          ...(withCa ? { via: 'depot-settings' as const } : {}),
          ...(push.status ? { status: push.status } : {}),
          ...(push.errorCode ? { errorCode: push.errorCode } : {}),
          ...(push.message ? { message: push.message } : {}),
        },
      };
    },
    { last },
  );
}
