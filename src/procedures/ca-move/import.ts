import { TRUSTED_FOR_OUTBOUND } from '../../constants.js';
import type { InstallerClient } from '../../installer/index.js';
import { aliasOf, type Fingerprints } from './trust.js';

export interface ImportResult {
  action: 'imported' | 'already-trusted';
  alias?: string;
}

/**
 * Import: the new CA into a consumer that lacks it; the old one stays. Looked
 * up by SHA-256 in the consumer's list first; the proof that follows reads the
 * list again, so the import itself is one request.
 */
export async function importNewCa(client: InstallerClient, newCa: { pem: string; sha256: string }, fingerprints: Fingerprints): Promise<ImportResult> {
  const alias = await aliasOf(client, newCa.sha256, fingerprints);
  if (alias !== undefined) return { action: 'already-trusted', alias };
  const reply = await client.importTrusted(newCa.pem, TRUSTED_FOR_OUTBOUND);
  // 409: imported meanwhile (another run, another operator); the list read by the proof is the judge.
  if (reply.status !== 200 && reply.status !== 201 && reply.status !== 409) throw client.apiError('Importing the new CA', reply);
  return { action: 'imported' };
}
