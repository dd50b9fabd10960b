/**
 * What public automation sends to a depot's consumers, sent as those clients
 * send it (raw HTTP, their header sets and body shapes), against the simulated
 * installer and the simulated SDDC Manager, and read as those clients read it.
 * Each client and what it reads is described in docs/interfaces.md.
 */
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPLIANCE_ROLES } from '../../src/constants.js';
import type { InstallerSimulatorOptions } from '../../src/simulators/installer/index.js';
import { tempDir } from '../helpers/temp.js';
import { withSim } from '../helpers/installer-sim.js';
import { until } from '../helpers/poll.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER, call, login, startTestDepot, type TestDepot } from './helpers.js';
import { ansibleDepotType, type DepotView } from '../helpers/public-clients.js';

const CERTS = '/v1/sddc-manager/trusted-certificates';
const DEPOT = '/v1/system/settings/depot';
const SYNC = '/v1/system/settings/depot/depot-sync-info';
const V910 = '9.1.0.0.25368698';
const V911 = '9.1.1.0.25400000';

/** The two consumers of a depot: the installer before bring-up, SDDC Manager after it. */
const CONSUMERS: Array<{ name: string; role: string; opts: InstallerSimulatorOptions }> = [
  { name: 'the installer', role: APPLIANCE_ROLES.installer, opts: {} },
  { name: 'SDDC Manager', role: APPLIANCE_ROLES.manager, opts: { role: 'sddc-manager' } },
];

let tmp: { dir: string; cleanup: () => Promise<void> };
let depot: TestDepot;

beforeAll(async () => {
  tmp = await tempDir('depotkit-replay-sddc-');
  depot = await startTestDepot(join(tmp.dir, 'a'));
});
afterAll(async () => {
  await depot?.close();
  await tmp?.cleanup();
});

const sha256 = (pem: string) => new X509Certificate(pem).fingerprint256;
const offlineDepot = (extra: object = {}) => ({
  offlineAccount: { username: DEPOT_USER, password: DEPOT_PASSWORD },
  depotConfiguration: { isOfflineDepot: true, hostname: depot.host, port: depot.port, ...extra },
});

/** LabFoundry's depot_matches: the consumer already uses this depot, as that user. */
function labFoundryMatches(view: DepotView): boolean {
  const conf = view.depotConfiguration ?? {};
  return Boolean(
    conf.isOfflineDepot && conf.hostname?.toLowerCase() === depot.host && conf.port === depot.port && view.offlineAccount?.username === DEPOT_USER,
  );
}

describe.each(CONSUMERS)('LabFoundry pointed at $name', ({ role, opts }) => {
  it('finds the role it accepts, trusts the CA by SHA-256, reads the 202 body, and sees the sync complete', async () => {
    await withSim(async (sim) => {
      // httpx's json=: a compact body with its own content type.
      const token = await call(sim, 'POST', '/v1/tokens', { body: { username: USER, password: PASSWORD } });
      expect(token.status).toBe(200);
      const bearer = (token.body as { accessToken: string }).accessToken;

      const info = (await call(sim, 'GET', '/v1/system/appliance-info', { token: bearer })).body as { role: string; version: string };
      expect(info.role).toBe(role);
      expect(['VcfInstaller', 'SddcManager']).toContain(info.role);
      expect(info.version.startsWith('9.')).toBe(true);

      const fingerprints = async () =>
        ((await call(sim, 'GET', CERTS, { token: bearer })).body as { elements: Array<{ certificate: string }> }).elements.map((e) => sha256(e.certificate));
      expect(await fingerprints()).not.toContain(sha256(depot.ca.certPem));
      const added = await call(sim, 'POST', CERTS, { token: bearer, body: { certificate: depot.ca.certPem, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' } });
      expect(added.status).toBe(200);
      expect(await fingerprints()).toContain(sha256(depot.ca.certPem));

      expect(labFoundryMatches((await call(sim, 'GET', DEPOT, { token: bearer })).body as DepotView)).toBe(false);
      const put = await call(sim, 'PUT', DEPOT, { token: bearer, body: offlineDepot() });
      expect(put.status).toBe(202);
      // LabFoundry fails the update when the 202 body carries another status.
      expect((put.body as DepotView).offlineAccount?.status).toBe('DEPOT_CONNECTION_SUCCESSFUL');

      const before = (await call(sim, 'GET', SYNC, { token: bearer })).body as { lastSyncCompletionTimestamp?: string };
      expect((await call(sim, 'PATCH', SYNC, { token: bearer })).status).toBe(202);
      // Done when the completion time moved and the status no longer says it runs.
      const latest = await until(
        async () =>
          (await call(sim, 'GET', SYNC, { token: bearer })).body as { syncStatus: string; lastSyncCompletionTimestamp?: string; errorMessage?: string },
        (s) =>
          Boolean(s.errorMessage) ||
          (Boolean(s.lastSyncCompletionTimestamp) &&
            s.lastSyncCompletionTimestamp !== before.lastSyncCompletionTimestamp &&
            !['PENDING', 'RUNNING', 'PROGRESS', 'SYNCING', 'START'].some((w) => s.syncStatus.toUpperCase().includes(w))),
        'the sync to complete',
        { timeoutMs: 60_000 },
      );
      expect(latest.errorMessage ?? '').toBe('');
      expect(latest.syncStatus).toBe('SYNCED');
      const verified = (await call(sim, 'GET', DEPOT, { token: bearer })).body as DepotView;
      expect(labFoundryMatches(verified)).toBe(true);
      expect(verified.offlineAccount?.status).toBe('DEPOT_CONNECTION_SUCCESSFUL');
    }, opts);
  }, 90_000);
});

describe.each(CONSUMERS)("the vendor's Ansible collection against $name", ({ opts }) => {
  it('sddc_manager_depot: an offline depot once the PUT is accepted, sent with its sslThumbprint and the JSON content type on every call', async () => {
    await withSim(async (sim) => {
      const { accessToken } = await login(sim);
      // Its client sends the JSON content type and the bearer on every call, a body or not.
      const headers = { 'content-type': 'application/json' };
      const body = JSON.stringify(offlineDepot({ sslThumbprint: 'AB:CD:EF:12:34:56:78:90:AB:CD:EF:12:34:56:78:90:AB:CD:EF:12' }));
      // Its trust role imports the depot's CA first; without it the module fails on the 403.
      expect((await call(sim, 'PUT', DEPOT, { token: accessToken, raw: body, headers })).status).toBe(403);
      await call(sim, 'POST', CERTS, { token: accessToken, body: { certificate: depot.ca.certPem, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' } });
      expect((await call(sim, 'PUT', DEPOT, { token: accessToken, raw: body, headers })).status).toBe(202);
      const shown = await call(sim, 'GET', DEPOT, { token: accessToken, headers });
      expect(ansibleDepotType(shown.body as DepotView)).toBe('offline');
      expect(shown.body).toMatchObject({
        offlineAccount: { status: 'DEPOT_CONNECTION_SUCCESSFUL' },
        depotConfiguration: { hostname: depot.host, port: depot.port },
      });
      expect((await call(sim, 'DELETE', DEPOT, { token: accessToken, headers })).status).toBe(204);
    }, opts);
  });

  // The module reads an account status or user as a depot already there, and would then never configure one.
  it('sddc_manager_depot: nothing configured on a fresh consumer nor after the DELETE', async () => {
    await withSim(async (sim) => {
      const { accessToken } = await login(sim);
      const headers = { 'content-type': 'application/json' };
      const fresh = await call(sim, 'GET', DEPOT, { token: accessToken, headers });
      expect(fresh.status).toBe(200);
      expect(ansibleDepotType(fresh.body as DepotView), JSON.stringify(fresh.body)).toBeNull();
      expect((await call(sim, 'DELETE', DEPOT, { token: accessToken, headers })).status).toBe(204);
      expect(ansibleDepotType((await call(sim, 'GET', DEPOT, { token: accessToken, headers })).body as DepotView)).toBeNull();
    }, opts);
  });

  it('sddc_manager_trusted_certificate: finds the certificate by its PEM whatever the header lines, and removes it by alias', async () => {
    await withSim(async (sim) => {
      const { accessToken } = await login(sim);
      const pemOnly = (s: string) => {
        const start = s.indexOf('-----BEGIN CERTIFICATE-----');
        const end = s.indexOf('-----END CERTIFICATE-----');
        return (start >= 0 && end >= 0 ? s.slice(start, end + '-----END CERTIFICATE-----'.length) : s).replace(/\s+/g, '');
      };
      // What the trusted-certificate role passes: subject and issuer lines before the PEM block.
      const given = `subject=CN=depotkit installer test CA\nissuer=CN=depotkit installer test CA\n${depot.ca.certPem}`.trim();
      const list = async () =>
        ((await call(sim, 'GET', CERTS, { token: accessToken })).body as { elements: Array<{ alias: string; certificate: string }> }).elements;
      expect((await list()).find((c) => pemOnly(c.certificate) === pemOnly(given))).toBeUndefined();
      const added = await call(sim, 'POST', CERTS, {
        token: accessToken,
        raw: JSON.stringify({ certificate: given, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' }),
        headers: { 'content-type': 'application/json' },
      });
      expect(added.status).toBe(200);
      const match = (await list()).find((c) => pemOnly(c.certificate) === pemOnly(given));
      expect(match?.alias).toBeTruthy();
      // The second run finds it and changes nothing; state=absent deletes by the alias it read.
      const removed = await call(sim, 'DELETE', `${CERTS}/${encodeURIComponent(match!.alias)}`, { token: accessToken });
      expect(removed.status).toBe(204);
      expect((await list()).find((c) => pemOnly(c.certificate) === pemOnly(given))).toBeUndefined();
      expect((await call(sim, 'DELETE', `${CERTS}/${encodeURIComponent(match!.alias)}`, { token: accessToken })).status).toBe(404);
    }, opts);
  });
});

describe.each(CONSUMERS)('PowerVCF against $name', ({ opts }) => {
  it('Request-VCFToken: a concatenated body; checkVCFToken reads the access token as a JWT with an expiry', async () => {
    await withSim(async (sim) => {
      const pair = await call(sim, 'POST', '/v1/tokens', {
        raw: `{"username": "${USER}","password": "${PASSWORD}"}`,
        headers: { 'content-type': 'application/json' },
      });
      expect(pair.status).toBe(200);
      const { accessToken, refreshToken } = pair.body as { accessToken: string; refreshToken: { id: string } };
      expect(accessToken.startsWith('eyJ')).toBe(true);
      const payload = JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString('utf8')) as { exp?: unknown };
      expect(typeof payload.exp).toBe('number');
      expect(typeof refreshToken.id).toBe('string');
    }, opts);
  });

  it('checkVCFToken refreshes with the raw refresh id and no Authorization, and takes the answer as the token', async () => {
    await withSim(async (sim) => {
      const pair = await login(sim);
      const refreshed = await call(sim, 'PATCH', '/v1/tokens/access-token/refresh', {
        raw: pair.refreshToken.id,
        headers: { accept: 'application/json', 'content-type': 'application/json' },
      });
      expect(refreshed.status).toBe(200);
      expect(typeof refreshed.body).toBe('string');
      expect((await call(sim, 'GET', DEPOT, { token: refreshed.body as string, headers: { accept: 'application/json' } })).status).toBe(200);
    }, opts);
  });

  // A 9.1.1 log shows it; PowerVCF throws on it.
  it('Get-VCFRelease before any depot meets 404 LCM_MANIFEST_NOT_FOUND', async () => {
    await withSim(async (sim) => {
      const { accessToken } = await login(sim);
      const releases = await call(sim, 'GET', '/v1/releases', { token: accessToken, headers: { accept: 'application/json' } });
      expect(releases.status).toBe(404);
      expect((releases.body as { errorCode: string }).errorCode).toBe('LCM_MANIFEST_NOT_FOUND');
    }, opts);
  });
});

describe.each(CONSUMERS)("the vendor's Python SDK samples against $name", ({ opts }) => {
  // Both samples' security filters refresh and retry only when a failed call's errorCode is
  // Unauthorized or Unauthenticated (utils/client.py, utils/sddc_manager_filter.py).
  it('an expired access token answers 401 with an errorCode the samples retry on, and the refreshed token is taken', async () => {
    let now = Date.now();
    await withSim(
      async (sim) => {
        const pair = await login(sim);
        now += 2 * 3600 * 1000;
        const expired = await call(sim, 'GET', SYNC, { token: pair.accessToken });
        expect(expired.status).toBe(401);
        expect(['Unauthorized', 'Unauthenticated']).toContain((expired.body as { errorCode: string }).errorCode);
        // The filter's retry: a new access token from the refresh id, then the same call again.
        const refreshed = await call(sim, 'PATCH', '/v1/tokens/access-token/refresh', { body: pair.refreshToken.id });
        expect(refreshed.status).toBe(200);
        expect((await call(sim, 'GET', SYNC, { token: refreshed.body as string })).status).toBe(200);
      },
      { ...opts, clock: () => now },
    );
  });
});

describe.each(CONSUMERS)('the Terraform provider against $name', ({ opts }) => {
  it('logs in again with the previous bearer on the token request, and sends the JSON content type on a GET and a DELETE', async () => {
    await withSim(async (sim) => {
      const first = await login(sim);
      const headers = { 'content-type': 'application/json', 'user-agent': 'terraform-provider-vcf/0.0.0' };
      // Its request editor adds the bearer it holds to every request, the new log-in included.
      const again = await call(sim, 'POST', '/v1/tokens', { token: first.accessToken, headers, raw: JSON.stringify({ username: USER, password: PASSWORD }) });
      expect(again.status).toBe(200);
      const stale = await call(sim, 'POST', '/v1/tokens', { token: 'eyJ.stale.token', headers, raw: JSON.stringify({ username: USER, password: PASSWORD }) });
      expect(stale.status).toBe(200);
      const { accessToken } = again.body as { accessToken: string };
      expect((await call(sim, 'GET', DEPOT, { token: accessToken, headers })).status).toBe(200);
      expect((await call(sim, 'DELETE', DEPOT, { token: accessToken, headers })).status).toBe(204);
    }, opts);
  });
});

describe.each(CONSUMERS)('the 9.1 and 9.1.1 depot url and trust against $name', ({ opts }) => {
  // Third-party notes and a 9.1.1 log: "a valid URL without query parameters or fragments".
  it('refuses a url with a query or a fragment on 9.1.0 and 9.1.1', async () => {
    for (const version of [V910, V911]) {
      await withSim(
        async (sim) => {
          const { accessToken } = await login(sim);
          for (const url of [`https://${depot.host}:${depot.port}/?x=1`, `https://${depot.host}:${depot.port}/#top`]) {
            const refused = await call(sim, 'PUT', DEPOT, {
              token: accessToken,
              body: { offlineAccount: { username: DEPOT_USER, password: DEPOT_PASSWORD }, depotConfiguration: { isOfflineDepot: true, url } },
            });
            expect(refused.status, `${version} ${url}`).toBe(400);
          }
        },
        { ...opts, version },
      );
    }
  });

  // A 9.1.1 log: a url with a user in it is refused (a "deprecated userinfo component").
  it('refuses a url with credentials in it on 9.1.1', async () => {
    await withSim(
      async (sim) => {
        const { accessToken } = await login(sim);
        await call(sim, 'POST', CERTS, { token: accessToken, body: { certificate: depot.ca.certPem, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' } });
        const refused = await call(sim, 'PUT', DEPOT, {
          token: accessToken,
          body: {
            offlineAccount: { username: DEPOT_USER, password: DEPOT_PASSWORD },
            depotConfiguration: { isOfflineDepot: true, url: `https://${DEPOT_USER}:${DEPOT_PASSWORD}@${depot.host}:${depot.port}` },
          },
        });
        expect(refused.status).toBe(400);
      },
      { ...opts, version: V911 },
    );
  });

  // Third-party notes on 9.1 and 9.1.1: credentials inside depotConfiguration end DEPOT_INVALID_CREDENTIAL
  // (the service reads no credentials there, so the depot refuses it).
  it('ends DEPOT_INVALID_CREDENTIAL when the credentials sit in depotConfiguration instead of offlineAccount (9.1.1), and never logs that password', async () => {
    await withSim(
      async (sim) => {
        const { accessToken } = await login(sim);
        await call(sim, 'POST', CERTS, { token: accessToken, body: { certificate: depot.ca.certPem, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' } });
        const put = await call(sim, 'PUT', DEPOT, {
          token: accessToken,
          body: { depotConfiguration: { isOfflineDepot: true, url: `https://${depot.host}:${depot.port}`, username: DEPOT_USER, password: DEPOT_PASSWORD } },
        });
        expect(put.status).toBe(400);
        expect((put.body as { errorCode: string }).errorCode).toBe('DEPOT_INVALID_CREDENTIAL');
        const shown = (await call(sim, 'GET', DEPOT, { token: accessToken })).body as DepotView;
        expect(shown.offlineAccount?.status).toBe('DEPOT_INVALID_CREDENTIAL');
        expect(JSON.stringify(shown)).not.toContain(DEPOT_PASSWORD);
        expect(sim.logs.join('\n')).not.toContain(DEPOT_PASSWORD);
      },
      { ...opts, version: V911 },
    );
  });

  it('takes depotConfiguration.trustedCertificates on 9.1.1 and reaches the depot with them', async () => {
    await withSim(
      async (sim) => {
        const { accessToken } = await login(sim);
        const put = await call(sim, 'PUT', DEPOT, { token: accessToken, body: offlineDepot({ trustedCertificates: [depot.ca.certPem] }) });
        expect(put.status).toBe(202);
        expect((put.body as DepotView).offlineAccount?.status).toBe('DEPOT_CONNECTION_SUCCESSFUL');
        // In the trust store from then on: LabFoundry's check by SHA-256 finds the CA, and a re-run imports nothing.
        const listed = (await call(sim, 'GET', CERTS, { token: accessToken })).body as { elements: Array<{ certificate: string }> };
        expect(listed.elements.map((e) => sha256(e.certificate))).toContain(sha256(depot.ca.certPem));
      },
      { ...opts, version: V911 },
    );
  });

  // The 9.1.1 reference: the certificates are added to the service's keystore, the JVM trust store
  // and the system's certificate folder, so they outlive the request.
  it('keeps 9.1.1 trustedCertificates: a later update without them still reaches the depot', async () => {
    await withSim(
      async (sim) => {
        const { accessToken } = await login(sim);
        expect((await call(sim, 'PUT', DEPOT, { token: accessToken, body: offlineDepot({ trustedCertificates: [depot.ca.certPem] }) })).status).toBe(202);
        expect((await call(sim, 'PUT', DEPOT, { token: accessToken, body: offlineDepot() })).status).toBe(202);
      },
      { ...opts, version: V911 },
    );
  });
});
