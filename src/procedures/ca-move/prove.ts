import type { InstallerClient } from '../../installer/index.js';
import { aliasesOf } from './trust.js';

export interface ProveResult {
  newCaAlias?: string;
  oldCaAlias?: string;
}

/** Prove: the consumer lists the new CA (and, while it is still served, the old one), found by SHA-256. */
export async function proveTrusted(client: InstallerClient, sha256s: { newCa: string; oldCa?: string }): Promise<ProveResult> {
  const [newCaAlias, oldCaAlias] = await aliasesOf(client, sha256s.oldCa ? [sha256s.newCa, sha256s.oldCa] : [sha256s.newCa]);
  return { ...(newCaAlias ? { newCaAlias } : {}), ...(oldCaAlias ? { oldCaAlias } : {}) };
}
