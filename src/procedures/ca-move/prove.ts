import type { InstallerClient } from '../../installer/index.js';
import { aliasOf, type Fingerprints } from './trust.js';

export interface ProveResult {
  newCaAlias?: string;
  oldCaAlias?: string;
}

/** Prove: the consumer lists the new CA (and, while it is still served, the old one), found by SHA-256. */
export async function proveTrusted(client: InstallerClient, sha256s: { newCa: string; oldCa?: string }, fingerprints: Fingerprints): Promise<ProveResult> {
  const newCaAlias = await aliasOf(client, sha256s.newCa, fingerprints);
  const oldCaAlias = sha256s.oldCa ? await aliasOf(client, sha256s.oldCa, fingerprints) : undefined;
  return { ...(newCaAlias ? { newCaAlias } : {}), ...(oldCaAlias ? { oldCaAlias } : {}) };
}
