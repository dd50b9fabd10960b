import { INSTALLER_DEFAULTS } from './defaults.js';
import { daysLeft, findByFingerprint, readCertificate, sha256Fingerprint } from '../cert/certificate.js';
import { anchorsChain, depotOriginOf, readServedChain } from './depot-chain.js';
import { trustedPem } from './trust.js';
import type { DepotSettings, TrustedCertificate } from './wire.js';

export interface TrustedSummary {
  alias: string;
  subject?: string;
  issuer?: string;
  notAfter?: string;
  /** The certificate's SHA-256 fingerprint (`AB:CD:...`). */
  sha256?: string;
  /** Whole days until it expires; negative once it has. */
  daysLeft?: number;
}

/** Whether a consumer trusts the depot's CA, and for how long. */
export interface DepotCaTrust {
  /** Where the depot's CA came from: given (`depotCa`), or the chain the configured depot sends. */
  source: 'given' | 'depot';
  /** The depot the chain was read from, when it was. */
  depot?: string;
  present: boolean;
  /** The trusted entry that is (or anchors) the depot's CA. */
  alias?: string;
  subject?: string;
  sha256?: string;
  daysLeft?: number;
  /** Absent, or present with fewer days left than the threshold. */
  flag?: 'missing' | 'expiring';
}

export interface DepotCaOptions {
  /** The depot's CA certificates (PEM); read from the chain the configured depot sends when absent. */
  depotCaPems?: string[];
  /** A trusted depot CA with fewer days left than this is flagged; 30 by default. */
  expiryWarnDays?: number;
  /** Timeout of the handshake with the depot. */
  timeoutMs?: number;
  now?: Date;
}

export const DEPOT_CA_WARN_DAYS = INSTALLER_DEFAULTS.depotCaWarnDays;

/** Subject, issuer, SHA-256 and days left of each trusted certificate (the alias alone for one that does not parse). */
export function summariseTrusted(elements: TrustedCertificate[], now = new Date()): TrustedSummary[] {
  return elements.map((e): TrustedSummary => {
    try {
      const cert = readCertificate(e.certificate);
      return {
        alias: e.alias,
        subject: cert.subject,
        issuer: cert.issuer,
        notAfter: cert.notAfter.toISOString(),
        sha256: cert.fingerprints.sha256,
        daysLeft: daysLeft(cert, now),
      };
    } catch {
      return { alias: e.alias };
    }
  });
}

/** Why the depot's CA was not looked for when none was given (depotCaTrust found nothing to look for). */
export function depotCaUnknownReason(settings: DepotSettings): string {
  if (!settings.depotConfiguration) return 'no depot is set';
  if (!depotOriginOf(settings)) return 'the depot is not set over HTTPS';
  return "the depot's certificate chain could not be read from here";
}

/**
 * Is the depot's CA among the consumer's trusted certificates? Given CAs
 * match by SHA-256; otherwise the configured depot's chain is read and an
 * entry that anchors it counts. Undefined when neither is known (no CA given,
 * no HTTPS depot set, or the depot not reachable from here).
 */
export async function depotCaTrust(
  elements: TrustedCertificate[],
  summaries: TrustedSummary[],
  settings: DepotSettings,
  opts: DepotCaOptions,
): Promise<DepotCaTrust | undefined> {
  const warnDays = opts.expiryWarnDays ?? DEPOT_CA_WARN_DAYS;
  let source: DepotCaTrust['source'];
  let listed: TrustedCertificate[];
  let depot: string | undefined;
  if (opts.depotCaPems && opts.depotCaPems.length > 0) {
    source = 'given';
    listed = [...new Set(opts.depotCaPems.flatMap((pem) => findByFingerprint(elements, sha256Fingerprint(pem), trustedPem)))];
  } else {
    const origin = depotOriginOf(settings);
    const chain = origin ? await readServedChain(origin, opts.timeoutMs) : undefined;
    if (!origin || !chain) return undefined;
    source = 'depot';
    depot = origin.host;
    listed = elements.filter((t) => anchorsChain(t.certificate, chain));
  }
  const found = listed.map((t) => summaries.find((s) => s.alias === t.alias)!);
  // The longest-lived match speaks for the consumer: a renewed CA beside the old one is not a problem.
  const best = found.sort((a, b) => (b.daysLeft ?? 0) - (a.daysLeft ?? 0))[0];
  const where = depot ? { depot } : {};
  if (!best) return { source, ...where, present: false, flag: 'missing' };
  const expiring = best.daysLeft !== undefined && best.daysLeft < warnDays;
  return {
    source,
    ...where,
    present: true,
    alias: best.alias,
    ...(best.subject ? { subject: best.subject } : {}),
    ...(best.sha256 ? { sha256: best.sha256 } : {}),
    ...(best.daysLeft !== undefined ? { daysLeft: best.daysLeft } : {}),
    ...(expiring ? { flag: 'expiring' as const } : {}),
  };
}
