import type { InstallerTarget } from '../../installer/index.js';
import { importNewCa, type ImportResult } from './import.js';
import { proveTrusted, type ProveResult } from './prove.js';
import type { ConsumerSessions } from './sessions.js';
import type { Fingerprints } from './trust.js';
import type { ConsumerRow } from './types.js';

/**
 * The import and its proof, one consumer after the other in one pass: each
 * consumer is proven on the connection that imported, instead of connecting
 * again in a second pass over the fleet. The report keeps a row per consumer
 * for each phase; a consumer that failed either has both rows carry the error.
 */
export async function importAndProve(
  sessions: ConsumerSessions,
  targets: InstallerTarget[],
  newCa: { pem: string; sha256: string },
  oldCaSha256: string | undefined,
  fingerprints: Fingerprints,
): Promise<{ imported: Array<ConsumerRow<ImportResult>>; proven: Array<ConsumerRow<ProveResult>> }> {
  const rows = await sessions.each(targets, async (client) => {
    const imported = await importNewCa(client, newCa, fingerprints);
    const proven = await proveTrusted(client, { newCa: newCa.sha256, oldCa: oldCaSha256 }, fingerprints);
    return { ok: proven.newCaAlias !== undefined, result: { imported, proven } };
  });
  return {
    imported: rows.map(({ result, ...row }) => (result ? { ...row, ok: true, result: result.imported } : row)),
    proven: rows.map(({ result, ...row }) => (result ? { ...row, result: result.proven } : row)),
  };
}
