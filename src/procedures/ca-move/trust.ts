import type { InstallerClient } from '../../installer/index.js';
import { sha256Fingerprint } from '../../pki/index.js';

function sha256Of(pem: string): string | undefined {
  try {
    return sha256Fingerprint(pem);
  } catch {
    return undefined;
  }
}

/** The alias under which a consumer lists a certificate, found by its SHA-256 (never by alias); undefined when it does not hold it. */
export async function aliasOf(client: InstallerClient, sha256: string): Promise<string | undefined> {
  const { elements } = await client.listTrusted();
  return elements.find((e) => typeof e.certificate === 'string' && sha256Of(e.certificate) === sha256)?.alias;
}
