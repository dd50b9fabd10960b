import { removeTrusted, type InstallerTarget, type UntrustOutcome } from '../../installer/index.js';
import { readCertificate, sha256Fingerprint } from '../../cert/index.js';
import { usageError } from '../../util/errors.js';
import type { DepotReach } from './reach.js';
import type { ConsumerSessions } from './sessions.js';
import type { ConsumerRow } from './types.js';

export interface RetireInput {
  /** The CA to take away, as PEM. */
  oldCaPem: string;
  /** The move's new CA, as PEM: never taken away, whatever `oldCaPem` is. */
  newCaPem: string;
  /** Timeout of the handshake with each consumer's depot. */
  timeoutMs: number;
  /** Where this host reaches the depot, and the consumers' name for it. */
  reach: DepotReach;
}

/**
 * Retire: the old CA removed from every consumer by the one removal of trust
 * (every alias it is listed under, found by SHA-256), which keeps any
 * certificate anchoring the chain the consumer's depot serves, or the whole
 * consumer as it was when that chain cannot be read. The new CA is refused
 * before anything is asked of a consumer.
 */
export function retireOldCa(sessions: ConsumerSessions, targets: InstallerTarget[], input: RetireInput): Promise<Array<ConsumerRow<UntrustOutcome[]>>> {
  const isNewCa = sha256Fingerprint(input.oldCaPem) === sha256Fingerprint(input.newCaPem);
  return sessions.each(
    targets,
    async (client) => {
      if (isNewCa) {
        throw usageError(
          `${readCertificate(input.oldCaPem).subject} is the move's new CA, the one the depot's certificate is issued by now: it is kept, nothing was removed.`,
          'Give as `oldCa` the CA the depot was served under before the move.',
        );
      }
      return { ok: true, result: await removeTrusted(client, [input.oldCaPem], { timeoutMs: input.timeoutMs, reach: input.reach }) };
    },
    { last: true },
  );
}
