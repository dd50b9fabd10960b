import { sha256OfPem, type InstallerClient, type TrustedCertificate } from '../../installer/index.js';

/**
 * The alias under which a list read already holds a certificate, found by SHA-256 (never by alias); undefined
 * when it does not. Each listed PEM is read once for the whole run (every consumer lists the same few CAs).
 */
export function aliasIn(elements: TrustedCertificate[], sha256: string): string | undefined {
  return elements.find((e) => typeof e.certificate === 'string' && sha256OfPem(e.certificate) === sha256)?.alias;
}

/** The aliases under which a consumer lists certificates, found by SHA-256 in one reading of its list; undefined for one it does not hold. */
export async function aliasesOf(client: InstallerClient, sha256s: string[]): Promise<Array<string | undefined>> {
  const { elements } = await client.listTrusted();
  return sha256s.map((sha256) => aliasIn(elements, sha256));
}

/** The alias under which a consumer lists a certificate; undefined when it does not hold it. */
export async function aliasOf(client: InstallerClient, sha256: string): Promise<string | undefined> {
  const [alias] = await aliasesOf(client, [sha256]);
  return alias;
}
