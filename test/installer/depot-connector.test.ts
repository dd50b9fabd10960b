import { describe, expect, it } from 'vitest';
import { INSTALLER_API } from '../../src/constants.js';
import { InstallerClient, connectDepot, depotConnector } from '../../src/installer/index.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER, startSim, type TestDepot } from './helpers.js';
import { useTestDepot } from '../helpers/installer-sim.js';

let depot: TestDepot;
useTestDepot('depotkit-installer-connector-', (started) => ({ depot } = started));

describe("the depot spec, checked once at the library's entry", () => {
  it('depotConnector refuses a spec that must not be sent before any consumer is reached', () => {
    expect(() => depotConnector({ url: 'http://depot.lab/', username: DEPOT_USER, password: DEPOT_PASSWORD })).toThrow(
      'Depot credentials go only over HTTPS; http://depot.lab/ is plain HTTP.',
    );
    let caught: unknown;
    try {
      depotConnector({ url: 'https://depot.lab.local:8443/PROD/' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ exitCode: 2, fix: 'Use `depotUrl` https://depot.lab.local:8443' });
  });

  it("connectDepot imports no CA for a spec it refuses; a connector's spec takes the password set after the check", async () => {
    const sim = await startSim();
    try {
      const client = await InstallerClient.connect({ url: sim.url, user: USER, password: PASSWORD, trust: { caPems: [sim.caPem] } });
      try {
        const refused = connectDepot(
          client,
          { url: `https://localhost:${depot.port}/PROD`, username: DEPOT_USER, password: DEPOT_PASSWORD },
          { caPems: [depot.ca.certPem] },
        );
        await expect(refused).rejects.toMatchObject({ exitCode: 2 });
        // The spec is refused before the first step: the depot's CA was not imported.
        expect(sim.logs.some((l) => l.includes(`POST ${INSTALLER_API.trustedCertificates}`))).toBe(false);

        const spec: { url: string; username: string; password?: string } = { url: `https://localhost:${depot.port}`, username: DEPOT_USER };
        const connect = depotConnector(spec);
        spec.password = DEPOT_PASSWORD;
        const connected = await connect(client, { caPems: [depot.ca.certPem], pollMs: 50, syncPollMs: 50 });
        expect(connected).toMatchObject({ ok: true, trusted: [{ action: 'imported' }], push: { ok: true, status: 'DEPOT_CONNECTION_SUCCESSFUL' } });
      } finally {
        await client.close();
      }
    } finally {
      await sim.close();
    }
  });
});
