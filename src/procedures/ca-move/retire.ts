import type { InstallerTarget } from '../../installer/index.js';
import type { ConsumerSessions } from './sessions.js';
import { aliasOf } from './trust.js';
import type { ConsumerRow } from './types.js';

interface RetireResult {
  action: 'removed' | 'absent';
  alias?: string;
}

/** Retire: the old CA removed from every consumer, by the alias its certificate is listed under. */
export function retireOldCa(sessions: ConsumerSessions, targets: InstallerTarget[], oldCaSha256: string): Promise<Array<ConsumerRow<RetireResult>>> {
  return sessions.each<RetireResult>(
    targets,
    async (client) => {
      const alias = await aliasOf(client, oldCaSha256);
      if (alias === undefined) return { ok: true, result: { action: 'absent' as const } };
      await client.deleteTrusted(alias);
      const still = await aliasOf(client, oldCaSha256);
      return { ok: still === undefined, result: { action: 'removed' as const, alias } };
    },
    { last: true },
  );
}
