import type { InstallerTarget } from '../../installer/index.js';
import { importNewCa, importSeparately, keepsDepotHost, type ImportContext, type ImportResult } from './import.js';
import { proveTrusted, type ProveResult } from './prove.js';
import type { ConsumerSessions } from './sessions.js';
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
  ctx: ImportContext,
  oldCaSha256: string | undefined,
): Promise<{ imported: Array<ConsumerRow<ImportResult>>; proven: Array<ConsumerRow<ProveResult>> }> {
  const sha256s = { newCa: ctx.newCa.sha256, oldCa: oldCaSha256 };
  const rows = await sessions.each(targets, async (client, appliance) => {
    await keepsDepotHost(client, ctx);
    let imported = await importNewCa(client, appliance, ctx);
    let proven = await proveTrusted(client, sha256s);
    if (proven.newCaAlias === undefined && imported.via === 'depot-settings') {
      // Trusted by the update but not listed (docs/interfaces.md): the separate import, which the list shows, and the proof again.
      imported = { ...(await importSeparately(client, ctx.newCa.pem)), ...(imported.kept ? { kept: imported.kept } : {}), unlistedAfterSettings: true };
      proven = await proveTrusted(client, sha256s);
    }
    return { ok: proven.newCaAlias !== undefined, result: { imported, proven } };
  });
  return {
    imported: rows.map(({ result, ...row }) => (result ? { ...row, ok: true, result: result.imported } : row)),
    proven: rows.map(({ result, ...row }) => (result ? { ...row, result: result.proven } : row)),
  };
}
