import { X509Certificate } from 'node:crypto';
import { sha256Fingerprint } from '../pki/index.js';
import type { InstallerClient } from './client.js';
import type { ApplianceInfo, DepotSettings } from './wire.js';

export interface TrustedSummary {
  alias: string;
  subject?: string;
  issuer?: string;
  notAfter?: string;
  sha256?: string;
}

export interface InstallerStatus {
  appliance: ApplianceInfo;
  depot: DepotSettings;
  trusted: TrustedSummary[];
}

/** Appliance info, depot settings and status, and the trusted certificates, in three reads. */
export async function installerStatus(client: InstallerClient): Promise<InstallerStatus> {
  const appliance = await client.applianceInfo();
  const depot = await client.getDepotSettings();
  const trusted = (await client.listTrusted()).elements.map((e): TrustedSummary => {
    try {
      const cert = new X509Certificate(e.certificate);
      return {
        alias: e.alias,
        subject: cert.subject.replace(/\n/g, ', '),
        issuer: cert.issuer.replace(/\n/g, ', '),
        notAfter: new Date(cert.validTo).toISOString(),
        sha256: sha256Fingerprint(e.certificate),
      };
    } catch {
      return { alias: e.alias };
    }
  });
  return { appliance, depot, trusted };
}
