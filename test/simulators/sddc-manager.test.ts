/**
 * The simulator as either consumer of a depot (the installer, SDDC Manager) on every API generation,
 * spoken to over raw HTTPS (undici, checked against the published API documents), not through
 * depotkit's installer client.
 */
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startInstallerSimulator } from '../../src/simulators/installer/index.js';
import { spawnCliJson } from '../helpers/cli.js';
import { withSim } from '../helpers/installer-sim.js';
import { until } from '../helpers/poll.js';
import { DEPOT_PASSWORD, DEPOT_USER, call, login, simTls, type TestDepot } from '../installer/helpers.js';
import { ansibleDepotType, type DepotView } from '../helpers/public-clients.js';
import { useTestDepot } from '../helpers/installer-sim.js';

const CERTS = '/v1/sddc-manager/trusted-certificates';
const DEPOT = '/v1/system/settings/depot';
const SYNC = '/v1/system/settings/depot/depot-sync-info';
const LAB_PASSWORD = 'VMware1!VMware1!';

const ROLES = [
  { role: 'installer', applianceRole: 'VcfInstaller', admin: 'admin@local' },
  { role: 'sddc-manager', applianceRole: 'SddcManager', admin: 'administrator@vsphere.local' },
] as const;
const VERSIONS = ['9.0.2.0.24000000', '9.1.0.0.25368698', '9.1.1.0.25500000'];
const MATRIX = ROLES.flatMap((r) => VERSIONS.map((version) => ({ ...r, version })));

let dir: string;
let depot: TestDepot;
useTestDepot('depotkit-sddc-sim-', (started) => ({ dir, depot } = started));

const offlineDepot = () => ({
  offlineAccount: { username: DEPOT_USER, password: DEPOT_PASSWORD },
  depotConfiguration: { isOfflineDepot: true, hostname: depot.host, port: depot.port },
});

describe.each(MATRIX)('the simulator as $role on $version', ({ role, applianceRole, admin, version }) => {
  it('answers appliance-info with its role, lets its administrator in, and serves the depot API from nothing to a synced release', async () => {
    const sim = await startInstallerSimulator({ role, version, tls: await simTls() });
    try {
      const info = await call(sim, 'GET', '/v1/system/appliance-info');
      expect(info.body).toEqual({ role: applianceRole, version });
      const { accessToken: token } = await login(sim, admin, LAB_PASSWORD);

      const fresh = await call(sim, 'GET', DEPOT, { token });
      expect(fresh.status).toBe(200);
      expect(ansibleDepotType(fresh.body as DepotView), JSON.stringify(fresh.body)).toBeNull();
      const noManifest = await call(sim, 'GET', '/v1/releases', { token });
      expect(noManifest.status).toBe(404);
      expect(noManifest.body).toMatchObject({ errorCode: 'LCM_MANIFEST_NOT_FOUND', message: expect.stringMatching(/manifest/i) });

      const added = await call(sim, 'POST', CERTS, { token, body: { certificate: depot.ca.certPem } });
      expect(added.status).toBe(200);
      const put = await call(sim, 'PUT', DEPOT, { token, body: offlineDepot() });
      expect(put.status).toBe(202);
      expect(ansibleDepotType((await call(sim, 'GET', DEPOT, { token })).body as DepotView)).toBe('offline');

      expect((await call(sim, 'PATCH', SYNC, { token })).status).toBe(202);
      const synced = await until(
        async () => (await call(sim, 'GET', SYNC, { token })).body as { syncStatus: string },
        (s) => s.syncStatus === 'SYNCED' || s.syncStatus === 'SYNC_FAILED',
        'the sync to end',
        // Each read is an HTTPS call on a connection of its own (a TLS handshake): every 100 ms, not the default 25.
        { timeoutMs: 60_000, everyMs: 100 },
      );
      expect(synced.syncStatus).toBe('SYNCED');
      const releases = await call(sim, 'GET', '/v1/releases', { token });
      expect(releases.status).toBe(200);
      expect((releases.body as { elements: unknown[] }).elements.length).toBeGreaterThan(0);
      const bundles = await call(sim, 'GET', '/v1/bundles', { token });
      expect((bundles.body as { elements: unknown[] }).elements.length).toBeGreaterThan(0);
    } finally {
      await sim.close();
    }
  }, 90_000);
});

describe('the role', () => {
  it('is refused when it is neither consumer', async () => {
    await expect(startInstallerSimulator({ role: 'vcenter' as 'installer' })).rejects.toThrow(/installer or sddc-manager, not "vcenter"/);
  });

  it('depotkit sim installer --role sddc-manager answers SddcManager and lets administrator@vsphere.local in with the lab password', async () => {
    const certOut = join(dir, 'sddc-sim.pem');
    const sim = await spawnCliJson<{ url: string; user: string }>(
      ['sim', 'installer', '--role', 'sddc-manager', '--cert-out', certOut, '--quiet', '--json'],
      {},
    );
    try {
      expect(sim.info.user).toBe('administrator@vsphere.local');
      const handle = { url: sim.info.url, caPem: await readFile(certOut, 'utf8') } as Parameters<typeof call>[0];
      expect((await call(handle, 'GET', '/v1/system/appliance-info')).body).toMatchObject({ role: 'SddcManager' });
      await login(handle, 'administrator@vsphere.local', LAB_PASSWORD);
    } finally {
      sim.child.kill('SIGTERM');
    }
    expect(await sim.exited).toBe(0);
  });
});

describe.each(ROLES)('the 9.1 depot url on $role', ({ role }) => {
  it('is refused with a query or a fragment on 9.1.0 and 9.1.1, before any connection', async () => {
    for (const version of VERSIONS.slice(1)) {
      await withSim(
        async (sim) => {
          const { accessToken: token } = await login(sim);
          for (const url of [
            `https://${depot.host}:${depot.port}/?x=1`,
            `https://${depot.host}:${depot.port}/depot#top`,
            `https://${depot.host}:${depot.port}/?`,
          ]) {
            const refused = await call(sim, 'PUT', DEPOT, {
              token,
              body: { offlineAccount: { username: DEPOT_USER, password: DEPOT_PASSWORD }, depotConfiguration: { isOfflineDepot: true, url } },
            });
            expect(refused.status, `${version} ${url}`).toBe(400);
            expect(refused.body).toMatchObject({
              errorCode: 'INVALID_DEPOT_SETTINGS',
              message: expect.stringContaining('a valid URL without query parameters or fragments'),
            });
          }
          expect(sim.logs.join('\n')).not.toMatch(/Depot validation failed/);
        },
        { role, version },
      );
    }
  });

  it('is refused with credentials in it on 9.1.1; 9.1.0 connects without them, the depot refuses the user, and the password is never shown', async () => {
    const url = `https://${DEPOT_USER}:${DEPOT_PASSWORD}@${depot.host}:${depot.port}/`;
    const answers: Record<string, unknown> = {};
    for (const version of VERSIONS.slice(1)) {
      await withSim(
        async (sim) => {
          const { accessToken: token } = await login(sim);
          await call(sim, 'POST', CERTS, { token, body: { certificate: depot.ca.certPem } });
          answers[version] = (await call(sim, 'PUT', DEPOT, { token, body: { depotConfiguration: { isOfflineDepot: true, url } } })).body;
          // A password written into the url is neither logged nor shown.
          expect(sim.logs.join('\n')).not.toContain(DEPOT_PASSWORD);
          expect(JSON.stringify((await call(sim, 'GET', DEPOT, { token })).body)).not.toContain(DEPOT_PASSWORD);
        },
        { role, version },
      );
    }
    expect(answers[VERSIONS[2]!]).toMatchObject({ errorCode: 'INVALID_DEPOT_SETTINGS', message: expect.stringContaining('deprecated userinfo component') });
    expect(answers[VERSIONS[1]!]).toMatchObject({ errorCode: 'DEPOT_INVALID_CREDENTIAL' });
  });
});

describe.each(ROLES)('trusted certificates on $role', ({ role }) => {
  const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;
  const listed = async (sim: Parameters<typeof call>[0], token: string) =>
    ((await call(sim, 'GET', CERTS, { token })).body as { elements: Array<{ alias: string; certificate: string }> }).elements;

  it('keeps those sent as 9.1.1 depotConfiguration.trustedCertificates: listed, and a later update without them still connects', async () => {
    await withSim(
      async (sim) => {
        const { accessToken: token } = await login(sim);
        const withCa = { ...offlineDepot(), depotConfiguration: { ...offlineDepot().depotConfiguration, trustedCertificates: [depot.ca.certPem] } };
        expect((await call(sim, 'PUT', DEPOT, { token, body: withCa })).status).toBe(202);
        const trusted = await listed(sim, token);
        expect(trusted.map((e) => fingerprint(e.certificate))).toEqual([fingerprint(depot.ca.certPem)]);
        const later = await call(sim, 'PUT', DEPOT, { token, body: offlineDepot() });
        expect(later.status).toBe(202);
        expect((later.body as DepotView).offlineAccount?.status).toBe('DEPOT_CONNECTION_SUCCESSFUL');
        // Sent again, the certificate already there is neither refused nor listed twice.
        expect((await call(sim, 'PUT', DEPOT, { token, body: withCa })).status).toBe(202);
        expect(await listed(sim, token)).toHaveLength(1);
      },
      { role, version: VERSIONS[2] },
    );
  });

  it('removes one by alias, and answers an unknown alias 404 in the error shape', async () => {
    await withSim(
      async (sim) => {
        const { accessToken: token } = await login(sim);
        await call(sim, 'POST', CERTS, { token, body: { certificate: depot.ca.certPem } });
        const [entry] = await listed(sim, token);
        expect((await call(sim, 'PUT', DEPOT, { token, body: offlineDepot() })).status).toBe(202);
        expect((await call(sim, 'DELETE', `${CERTS}/${encodeURIComponent(entry!.alias)}`, { token })).status).toBe(204);
        expect(await listed(sim, token)).toEqual([]);
        // Gone from the store: the depot's certificate is no longer trusted.
        expect((await call(sim, 'PUT', DEPOT, { token, body: offlineDepot() })).status).toBe(403);
        const unknown = await call(sim, 'DELETE', `${CERTS}/${encodeURIComponent(entry!.alias)}`, { token });
        expect(unknown.status).toBe(404);
        expect(unknown.body).toMatchObject({ errorCode: 'TRUSTED_CERTIFICATE_NOT_FOUND', message: expect.stringContaining(entry!.alias) });
      },
      { role, version: VERSIONS[1] },
    );
  });
});
