import { readCertificate } from '../pki/certificate-reader.js';
import { sha256Fingerprint } from '../pki/inspect.js';
import { DepotkitError, EXIT } from '../util/errors.js';
import type { InstallerClient } from './client.js';
import { anchorsChain, depotOriginOf, readServedChain } from './depot-chain.js';
import type { TrustedCertificate } from './wire.js';
import { sha256OfPem } from './trust.js';

export interface UntrustOutcome {
  subject: string;
  /** SHA-256 of the certificate, 64 lowercase hex digits. */
  sha256: string;
  action: 'removed' | 'absent';
  /** The aliases it was listed under and deleted. */
  aliases: string[];
}

export interface UntrustOptions {
  /** Remove it even when it anchors the chain the configured depot sends. */
  force?: boolean;
  /** Timeout of the handshake with the depot. */
  timeoutMs?: number;
}

/** The chain the consumer's configured HTTPS depot sends; undefined when none is set or it cannot be reached. */
async function configuredDepotChain(client: InstallerClient, timeoutMs: number | undefined): Promise<{ host: string; chain: string[] } | undefined> {
  const origin = depotOriginOf(await client.getDepotSettings());
  const chain = origin ? await readServedChain(origin, timeoutMs) : undefined;
  return origin && chain ? { host: origin.host, chain } : undefined;
}

/**
 * Takes certificates out of the consumer's trust: the list is read, each
 * certificate found by its SHA-256 (never by alias, which the consumer makes
 * up), and every alias it is listed under deleted. A certificate that anchors
 * the chain the configured depot sends is kept unless `force`: without it the
 * consumer can no longer sync or download from its depot.
 */
export async function removeTrusted(client: InstallerClient, pems: string[], opts: UntrustOptions = {}): Promise<UntrustOutcome[]> {
  const list = (await client.listTrusted()).elements;
  const wanted = pems.map((pem) => ({ pem, sha256: sha256Fingerprint(pem), subject: readCertificate(pem).subject }));
  const matches = wanted.map((w) => list.filter((e: TrustedCertificate) => sha256OfPem(e.certificate) === w.sha256));
  if (!opts.force && matches.some((m) => m.length > 0)) {
    const depot = await configuredDepotChain(client, opts.timeoutMs);
    const needed = depot ? wanted.find((w, i) => matches[i]!.length > 0 && anchorsChain(w.pem, depot.chain)) : undefined;
    if (depot && needed) {
      throw new DepotkitError(
        `${needed.subject} anchors the certificate chain the configured depot ${depot.host} sends: removing it stops this consumer from reaching its depot; nothing was removed.`,
        EXIT.problems,
        'Point the consumer at a depot under another CA first, or pass `force` to remove it anyway.',
      );
    }
  }
  const outcomes: UntrustOutcome[] = [];
  for (const [i, w] of wanted.entries()) {
    const aliases = matches[i]!.map((e) => e.alias);
    for (const alias of aliases) await client.deleteTrusted(alias);
    outcomes.push({ subject: w.subject, sha256: w.sha256, action: aliases.length > 0 ? 'removed' : 'absent', aliases });
  }
  const left = (await client.listTrusted()).elements.filter((e) => outcomes.some((o) => o.action === 'removed' && sha256OfPem(e.certificate) === o.sha256));
  if (left.length > 0) {
    throw new DepotkitError(`The consumer answered the removal but still lists ${left.map((e) => e.alias).join(', ')}: it is still trusted.`, EXIT.problems);
  }
  return outcomes;
}
