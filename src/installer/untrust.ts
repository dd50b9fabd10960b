import { findByFingerprint, readCertificate, sha256Fingerprint } from '../cert/certificate.js';
import { DepotkitError, EXIT } from '../util/errors.js';
import type { InstallerClient } from './client.js';
import { anchorsChain, depotOriginOf, servedChainOf } from './depot-chain.js';
import type { DepotSettings } from './wire.js';
import { trustedPem } from './trust.js';
import { hostOf } from '../util/url.js';

export interface UntrustOutcome {
  subject: string;
  /** The certificate's SHA-256 fingerprint (`AB:CD:...`). */
  sha256: string;
  action: 'removed' | 'absent';
  /** The aliases it was listed under and deleted. */
  aliases: string[];
}

export interface UntrustOptions {
  /** Remove it even when it anchors the chain the configured depot sends, or when that chain cannot be read. */
  force?: boolean;
  /** Timeout of the handshake with the depot. */
  timeoutMs?: number;
  /**
   * Where this host reaches a depot that the consumers know by a name it does not resolve (`origin`, the
   * depot's address here; `serverName`, the consumers' name for it): a consumer set to that name and port
   * has its depot's chain read there, with that name sent, as the consumer would be shown it.
   */
  reach?: { origin: string; serverName: string };
}

interface Wanted {
  pem: string;
  sha256: string;
  subject: string;
}

/** Does the consumer's depot, as its settings say, need no certificate: none set, or plain HTTP? */
function needsNoCertificate(settings: DepotSettings): boolean {
  const conf = settings.depotConfiguration;
  if (!conf) return true;
  return conf.url !== undefined ? /^http:\/\//i.test(conf.url) : !conf.hostname;
}

/**
 * Why taking `listed` (certificates the consumer trusts) away could stop it
 * from reaching its depot; undefined when it provably cannot. The depot is the
 * one the consumer's settings name, read through its API; the chain that depot
 * sends says which certificates anchor it. A chain that cannot be read from
 * here (a name that resolves only where the consumer is, a depot down a
 * moment) proves nothing, so the removal is refused then too.
 */
/** Whether the consumer's depot is the one `reach` says where to reach. */
function reachedAt(origin: URL, reach: UntrustOptions['reach']): URL | undefined {
  if (!reach) return undefined;
  const at = new URL(reach.origin);
  const port = (url: URL) => url.port || (url.protocol === 'http:' ? '80' : '443');
  return hostOf(origin) === reach.serverName && port(origin) === port(at) ? at : undefined;
}

async function reasonToKeep(client: InstallerClient, listed: Wanted[], opts: UntrustOptions): Promise<DepotkitError | undefined> {
  const { timeoutMs } = opts;
  const settings = await client.getDepotSettings();
  if (needsNoCertificate(settings)) return undefined;
  const origin = depotOriginOf(settings);
  // A URL that does not parse is not printed: it may carry the depot's password.
  const depot = origin ? `the configured depot ${origin.host}` : 'the configured depot';
  const at = origin && reachedAt(origin, opts.reach);
  const served = at
    ? await servedChainOf(at, timeoutMs, opts.reach!.serverName)
    : origin
      ? await servedChainOf(origin, timeoutMs)
      : { unread: 'the URL in its settings does not parse' };
  if ('unread' in served) {
    const names = listed.map((w) => `${w.subject} (SHA-256 ${w.sha256})`).join(', ');
    return new DepotkitError(
      `The chain ${depot} sends cannot be read from here (${served.unread}), so nothing proves that ${names} does not anchor it: removing it could stop this consumer from reaching its depot; nothing was removed.`,
      EXIT.problems,
      "Run the removal again from a machine where the depot's name resolves and the depot answers, or pass `force` to remove it anyway.",
    );
  }
  const needed = listed.find((w) => anchorsChain(w.pem, served.chain));
  if (!needed) return undefined;
  return new DepotkitError(
    `${needed.subject} (SHA-256 ${needed.sha256}) anchors the certificate chain ${depot} sends: removing it stops this consumer from reaching its depot; nothing was removed.`,
    EXIT.problems,
    'Point the consumer at a depot under another CA first, or pass `force` to remove it anyway.',
  );
}

/**
 * Takes certificates out of the consumer's trust: the list is read, each
 * certificate found by its SHA-256 (never by alias, which the consumer makes
 * up), and every alias it is listed under deleted. Unless `force`, nothing is
 * removed when one of them anchors the chain the consumer's configured depot
 * sends, or when that cannot be ruled out (the chain not readable from here):
 * without it the consumer could no longer sync or download from its depot.
 */
export async function removeTrusted(client: InstallerClient, pems: string[], opts: UntrustOptions = {}): Promise<UntrustOutcome[]> {
  const list = (await client.listTrusted()).elements;
  const wanted = pems.map((pem): Wanted => ({ pem, sha256: sha256Fingerprint(pem), subject: readCertificate(pem).subject }));
  const matches = wanted.map((w) => findByFingerprint(list, w.sha256, trustedPem));
  const listed = wanted.filter((_, i) => matches[i]!.length > 0);
  if (!opts.force && listed.length > 0) {
    const refusal = await reasonToKeep(client, listed, opts);
    if (refusal) throw refusal;
  }
  const outcomes: UntrustOutcome[] = [];
  for (const [i, w] of wanted.entries()) {
    const aliases = matches[i]!.map((e) => e.alias);
    for (const alias of aliases) await client.deleteTrusted(alias);
    outcomes.push({ subject: w.subject, sha256: w.sha256, action: aliases.length > 0 ? 'removed' : 'absent', aliases });
  }
  const after = (await client.listTrusted()).elements;
  const left = outcomes.flatMap((o) => (o.action === 'removed' ? findByFingerprint(after, o.sha256, trustedPem) : []));
  if (left.length > 0) {
    throw new DepotkitError(`The consumer answered the removal but still lists ${left.map((e) => e.alias).join(', ')}: it is still trusted.`, EXIT.problems);
  }
  return outcomes;
}
