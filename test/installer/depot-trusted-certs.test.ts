import { describe, expect, it } from 'vitest';
import { InstallerClient, pushDepot } from '../../src/installer/index.js';
import { sha256Fingerprint } from '../../src/cert/index.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER, startSim, type TestDepot } from './helpers.js';
import { useTestDepot } from '../helpers/installer-sim.js';

let depot: TestDepot;
useTestDepot('depotkit-installer-trusted-certs-', (started) => ({ depot } = started));

const PUT_DEPOT = 'PUT /v1/system/settings/depot';
const POST_TRUST = 'POST /v1/sddc-manager/trusted-certificates';
const APPLIANCE_INFO = 'GET /v1/system/appliance-info';

/** The simulator's request lines written since `from`. */
function requests(logs: string[], from = 0): string[] {
  return logs.slice(from).filter((l) => l.includes(' [http] '));
}

async function connected(version: string): Promise<{ client: InstallerClient; logs: string[]; close: () => Promise<void> }> {
  const sim = await startSim({ version });
  const client = await InstallerClient.connect({ url: sim.url, user: USER, password: PASSWORD, trust: { caPems: [sim.caPem] } });
  return {
    client,
    logs: sim.logs,
    close: async () => {
      await client.close();
      await sim.close();
    },
  };
}

describe('depot settings with certificates to trust (9.1.1 and later)', () => {
  it('sends them to a 9.1.1 consumer, which then lists them and validates the depot, with no separate import; a re-run sends nothing', async () => {
    const c = await connected('9.1.1.0.25100000');
    try {
      const spec = { url: `https://localhost:${depot.port}`, username: DEPOT_USER, password: DEPOT_PASSWORD, trustedCertificates: [depot.ca.certPem] };
      // The consumer does not trust the depot's CA before: only the certificates sent with the settings let it validate the depot.
      expect((await c.client.listTrusted()).elements).toEqual([]);
      const first = await pushDepot(c.client, spec);
      expect(first).toMatchObject({ action: 'updated', ok: true, status: 'DEPOT_CONNECTION_SUCCESSFUL' });
      const listed = (await c.client.listTrusted()).elements.map((e) => sha256Fingerprint(e.certificate));
      expect(listed).toEqual([sha256Fingerprint(depot.ca.certPem)]);
      const sent = requests(c.logs);
      expect(sent.filter((l) => l.includes(PUT_DEPOT))).toHaveLength(1);
      expect(sent.some((l) => l.includes(POST_TRUST))).toBe(false);
      expect(c.logs.some((l) => l.includes('Updating depot settings:') && l.includes('"trustedCertificates":["-----BEGIN CERTIFICATE-----'))).toBe(true);

      const before = c.logs.length;
      expect(await pushDepot(c.client, spec)).toMatchObject({ action: 'unchanged', ok: true });
      expect(requests(c.logs, before).some((l) => l.includes(PUT_DEPOT))).toBe(false);
    } finally {
      await c.close();
    }
  });

  it('refuses them for a 9.1.0 or 9.0.2 consumer before anything is sent, and takes the version it is given instead of asking again', async () => {
    for (const version of ['9.1.0.0.25368698', '9.0.2.0.24920000']) {
      const c = await connected(version);
      try {
        const spec = { url: `https://localhost:${depot.port}`, username: DEPOT_USER, password: DEPOT_PASSWORD, trustedCertificates: [depot.ca.certPem] };
        const asked = await pushDepot(c.client, spec).catch((e: unknown) => e);
        expect((asked as Error).message).toBe(`The installer's version ${version} takes no certificates with its depot settings; that needs 9.1.1 or later.`);
        expect(requests(c.logs).filter((l) => l.includes(APPLIANCE_INFO))).toHaveLength(1);
        const before = c.logs.length;
        const given = await pushDepot(c.client, spec, { applianceVersion: version }).catch((e: unknown) => e);
        expect((given as Error).message).toContain('that needs 9.1.1 or later');
        const sent = requests(c.logs);
        expect(sent.some((l) => l.includes(PUT_DEPOT) || l.includes(POST_TRUST))).toBe(false);
        expect(requests(c.logs, before).some((l) => l.includes(APPLIANCE_INFO))).toBe(false);
        expect((await c.client.listTrusted()).elements).toEqual([]);
      } finally {
        await c.close();
      }
    }
  });

  it('refuses what is not a PEM certificate, and certificates for a plain-HTTP depot', async () => {
    const c = await connected('9.1.1.0.25100000');
    try {
      const https = { url: `https://localhost:${depot.port}`, username: DEPOT_USER, password: DEPOT_PASSWORD };
      await expect(pushDepot(c.client, { ...https, trustedCertificates: ['not a certificate'] })).rejects.toThrow(
        'Each certificate to send with the depot settings must be a PEM certificate (BEGIN CERTIFICATE).',
      );
      await expect(pushDepot(c.client, { url: `http://localhost:${depot.port}`, trustedCertificates: [depot.ca.certPem] })).rejects.toThrow(
        `Certificates to trust go with an HTTPS depot; http://localhost:${depot.port} is plain HTTP.`,
      );
      expect(requests(c.logs).some((l) => l.includes(PUT_DEPOT))).toBe(false);
    } finally {
      await c.close();
    }
  });
});
