import { TRUSTED_FOR_OUTBOUND } from '../../constants.js';
import { findByFingerprint, readCertificates } from '../../cert/index.js';
import { depotOriginOf, pushDepot, trustedPem, type ApplianceInfo, type DepotSpec, type InstallerClient } from '../../installer/index.js';
import { DepotkitError, EXIT } from '../../util/errors.js';
import { caRouteOf, type CaRoute, type ServedAnchors } from './route.js';

export interface ImportResult {
  action: 'imported' | 'already-trusted';
  /** The way the new CA went; none when the consumer held it already. */
  via?: CaRoute;
  alias?: string;
  /** SHA-256 of the certificates sent along with the new CA in the depot settings: those anchoring the chain served then. */
  kept?: string[];
  /** The depot settings update passed but the list did not show the new CA: it was imported separately after it. */
  unlistedAfterSettings?: true;
}

/** What the import needs besides the consumer: the new CA, the depot as the consumers are pointed at it, what they keep trusting. */
export interface ImportContext {
  newCa: { pem: string; sha256: string };
  depot: DepotSpec;
  anchors: ServedAnchors;
  /** Point a consumer set to another depot host or port at this one. */
  repoint?: boolean;
}

/**
 * Refuses a consumer whose depot settings name another host or port than the move's depot URL: the move's
 * updates would point it elsewhere (the depot's address, when the consumers know it by a name), unless
 * `repoint` asks for that. A consumer set to no depot over HTTPS has none to lose.
 */
export async function keepsDepotHost(client: InstallerClient, ctx: Pick<ImportContext, 'depot' | 'repoint'>): Promise<void> {
  if (ctx.repoint) return;
  const current = depotOriginOf(await client.getDepotSettings());
  const wanted = new URL(ctx.depot.url!);
  if (current === undefined || current.host === wanted.host) return;
  throw new DepotkitError(
    `The consumer is set to the depot at ${current.host}, not ${wanted.host}: the move would point it elsewhere, so nothing was sent.`,
    EXIT.usage,
    `Give the depot's address as \`depotUrl\` and \`asHost\` ${current.hostname}, the name the consumers use; or \`repoint\` to set ${wanted.host} on them.`,
  );
}

/**
 * Import: the new CA into a consumer that lacks it (looked up by SHA-256 in
 * its list first; the proof that follows reads the list again). A 9.1.1 or
 * later consumer gets it with its depot settings, the move's depot spec, which
 * it validates before it answers: the certificates anchoring the served chain
 * go along, so the validation passes on the old certificate. An earlier one
 * gets the separate import; the old CA stays either way.
 */
export async function importNewCa(client: InstallerClient, appliance: ApplianceInfo, ctx: ImportContext): Promise<ImportResult> {
  const { elements } = await client.listTrusted();
  const alias = findByFingerprint(elements, ctx.newCa.sha256, trustedPem)[0]?.alias;
  if (alias !== undefined) return { action: 'already-trusted', alias };
  if (caRouteOf(appliance.version) === 'trusted-certificates') return importSeparately(client, ctx.newCa.pem);
  const kept = await ctx.anchors.keptFrom(elements);
  const push = await pushDepot(client, { ...ctx.depot, trustedCertificates: [ctx.newCa.pem, ...kept] }, { force: true, applianceVersion: appliance.version });
  if (!push.ok) {
    throw new DepotkitError(
      `The depot settings update carrying the new CA failed its validation (${push.errorCode ?? push.status ?? 'no status'})${push.message ? `: ${push.message}` : '.'}`,
      EXIT.problems,
      push.fix,
    );
  }
  const sent = kept.flatMap((pem) => readCertificates(pem)[0]?.fingerprints.sha256 ?? []);
  return { action: 'imported', via: 'depot-settings', ...(sent.length > 0 ? { kept: sent } : {}) };
}

/** The separate import of the trusted certificates, one request. */
export async function importSeparately(client: InstallerClient, pem: string): Promise<ImportResult> {
  const reply = await client.importTrusted(pem, TRUSTED_FOR_OUTBOUND);
  // 409: imported meanwhile (another run, another operator); the list read by the proof is the judge.
  if (reply.status !== 200 && reply.status !== 201 && reply.status !== 409) throw client.apiError('Importing the new CA', reply);
  return { action: 'imported', via: 'trusted-certificates' };
}
