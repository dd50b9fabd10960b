import { findByFingerprint } from '../../cert/index.js';
import { trustedPem, type InstallerClient } from '../../installer/index.js';

export interface ProveResult {
  newCaAlias?: string;
  oldCaAlias?: string;
}

/** Prove: the consumer lists the new CA (and, while it is still served, the old one), found by SHA-256. */
export async function proveTrusted(client: InstallerClient, sha256s: { newCa: string; oldCa?: string }): Promise<ProveResult> {
  const { elements } = await client.listTrusted();
  const [newCaAlias, oldCaAlias] = [sha256s.newCa, sha256s.oldCa].map((sha256) => findByFingerprint(elements, sha256, trustedPem)[0]?.alias);
  return { ...(newCaAlias ? { newCaAlias } : {}), ...(oldCaAlias ? { oldCaAlias } : {}) };
}
