import type { InstallerClient, TrustedCertificate } from '../../installer/index.js';
import { sha256Fingerprint } from '../../pki/index.js';

/**
 * SHA-256 fingerprints of listed certificates, each PEM parsed once per move:
 * every consumer lists the same few CAs, and parsing them again for each
 * consumer and phase was the move's largest CPU cost after its requests.
 */
export class Fingerprints {
  private readonly known = new Map<string, string | undefined>();

  of(pem: string): string | undefined {
    if (this.known.has(pem)) return this.known.get(pem);
    let sha256: string | undefined;
    try {
      sha256 = sha256Fingerprint(pem);
    } catch {
      // An entry the consumer lists but that does not parse matches nothing.
    }
    this.known.set(pem, sha256);
    return sha256;
  }
}

/** The alias under which a list read already holds a certificate, found by SHA-256 (never by alias); undefined when it does not. */
export function aliasIn(elements: TrustedCertificate[], sha256: string, fingerprints: Fingerprints): string | undefined {
  return elements.find((e) => typeof e.certificate === 'string' && fingerprints.of(e.certificate) === sha256)?.alias;
}

/** The aliases under which a consumer lists certificates, found by SHA-256 in one reading of its list; undefined for one it does not hold. */
export async function aliasesOf(client: InstallerClient, sha256s: string[], fingerprints: Fingerprints): Promise<Array<string | undefined>> {
  const { elements } = await client.listTrusted();
  return sha256s.map((sha256) => aliasIn(elements, sha256, fingerprints));
}

/** The alias under which a consumer lists a certificate; undefined when it does not hold it. */
export async function aliasOf(client: InstallerClient, sha256: string, fingerprints: Fingerprints): Promise<string | undefined> {
  const [alias] = await aliasesOf(client, [sha256], fingerprints);
  return alias;
}
