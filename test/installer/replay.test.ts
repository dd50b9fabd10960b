/**
 * The requests that public automation sends to real installers, sent as those
 * clients send them (raw bodies, string-typed fields, their header sets), and
 * what real installers answer them. Every answer is also checked against the
 * published 9.1 and 9.0 structure (helpers.call).
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueServerCert } from '../../src/cert/index.js';
import { ServiceLog } from '../../src/simulators/installer/log.js';
import { tempDir } from '../helpers/temp.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER, call, depotCa, depotSettings, login, startTestDepot, type TestDepot } from './helpers.js';
import { withSim } from '../helpers/installer-sim.js';

const run = promisify(execFile);
const CERTS = '/v1/sddc-manager/trusted-certificates';
const DEPOT = '/v1/system/settings/depot';
const LAB_FQDN = 'depot.lab.local';

let tmp: { dir: string; cleanup: () => Promise<void> };
let depot: TestDepot;
/** The same demo depot with a certificate for an FQDN no DNS knows. */
let fqdnDepot: TestDepot;
let leaf: { certPem: string; chainPem: string; keyPem: string };

beforeAll(async () => {
  tmp = await tempDir('depotkit-installer-replay-');
  depot = await startTestDepot(join(tmp.dir, 'a'));
  const ca = await depotCa();
  leaf = await issueServerCert(ca, { dns: [LAB_FQDN, 'localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  fqdnDepot = await startTestDepot(join(tmp.dir, 'b'), { cert: { certPem: leaf.chainPem, keyPem: leaf.keyPem } });
});
afterAll(async () => {
  await depot?.close();
  await fqdnDepot?.close();
  await tmp?.cleanup();
});

const normalised = (pem: string) => pem.replace(/\s+/g, '');

describe('a lab-deployment script for 9.x (lamw/vcf-automated-lab-deployment)', () => {
  it('polls appliance-info without a token, uses the token of a 200, and gets 202 for its depot settings', async () => {
    await withSim(async (sim) => {
      const probe = await call(sim, 'GET', '/v1/system/appliance-info');
      expect(probe.status).toBe(200);
      expect(probe.body).toEqual({ role: 'VcfInstaller', version: expect.stringMatching(/^9\.1\./) });

      const token = await call(sim, 'POST', '/v1/tokens', {
        raw: JSON.stringify({ username: USER, password: PASSWORD }),
        headers: { 'content-type': 'application/json' },
      });
      expect(token.status).toBe(200);
      const { accessToken } = token.body as { accessToken: string };

      await call(sim, 'POST', CERTS, { token: accessToken, body: { certificate: depot.ca.certPem, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' } });
      const put = await call(sim, 'PUT', DEPOT, {
        token: accessToken,
        body: {
          offlineAccount: { username: DEPOT_USER, password: DEPOT_PASSWORD },
          depotConfiguration: { isOfflineDepot: true, hostname: depot.host, port: depot.port },
        },
      });
      expect(put.status).toBe(202);
    });
  });
});

describe("the vendor's PowerShell module", () => {
  it('refreshes with the raw, unquoted refresh id and no Authorization header', async () => {
    await withSim(async (sim) => {
      const pair = await login(sim);
      const refreshed = await call(sim, 'PATCH', '/v1/tokens/access-token/refresh', {
        raw: pair.refreshToken.id,
        headers: { 'content-type': 'application/json' },
      });
      expect(refreshed.status).toBe(200);
      expect(typeof refreshed.body).toBe('string');
      expect((await call(sim, 'GET', DEPOT, { token: refreshed.body as string })).status).toBe(200);
    });
  });
});

describe("the vendor's Ansible collection", () => {
  it("lists first, imports the depot's leaf as openssl s_client prints it, and the depot (sent with sslThumbprint) is accepted", async () => {
    await withSim(async (sim) => {
      const { accessToken } = await login(sim);
      const listed = await call(sim, 'GET', CERTS, { token: accessToken });
      const present = (listed.body as { elements: Array<{ certificate: string }> }).elements.some(
        (e) => normalised(e.certificate) === normalised(leaf.certPem),
      );
      expect(present).toBe(false);

      // What `openssl s_client -showcerts` prints before the PEM block, and the role keeps.
      const fetched = `subject=CN=${LAB_FQDN}\nissuer=CN=depotkit installer test CA\n${leaf.certPem}`;
      const imported = await call(sim, 'POST', CERTS, { token: accessToken, body: { certificate: fetched, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' } });
      expect(imported.status).toBe(200);
      const stored = (imported.body as { elements: Array<{ certificate: string }> }).elements[0]!.certificate;
      expect(stored.startsWith('-----BEGIN CERTIFICATE-----\n')).toBe(true);
      expect(normalised(stored)).toBe(normalised(leaf.certPem));

      // Only the leaf is trusted, not its CA: Java's PKIX takes it as a trust anchor all the same.
      const put = await call(sim, 'PUT', DEPOT, {
        token: accessToken,
        body: {
          offlineAccount: { username: DEPOT_USER, password: DEPOT_PASSWORD },
          depotConfiguration: { isOfflineDepot: true, hostname: 'localhost', port: fqdnDepot.port, sslThumbprint: 'AA:BB:CC' },
        },
      });
      expect(put.status).toBe(202);
      const shown = await call(sim, 'GET', DEPOT, { token: accessToken });
      expect(shown.body).toMatchObject({
        offlineAccount: { status: 'DEPOT_CONNECTION_SUCCESSFUL' },
        depotConfiguration: { hostname: 'localhost', port: fqdnDepot.port },
      });
      expect(JSON.stringify(shown.body)).not.toContain('sslThumbprint');
    });
  });
});

describe('an offline-depot script from a vendor workshop', () => {
  it('sends isOfflineDepot and port as strings, which the installer coerces', async () => {
    await withSim(async (sim) => {
      const { accessToken } = await login(sim);
      await call(sim, 'POST', CERTS, { token: accessToken, body: { certificate: depot.ca.certPem, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' } });
      const raw = `{"offlineAccount": {"username": "${DEPOT_USER}", "password": "${DEPOT_PASSWORD}"}, "depotConfiguration": {"isOfflineDepot": "true", "hostname": "localhost", "port": "${depot.port}"}}`;
      const put = await call(sim, 'PUT', DEPOT, { token: accessToken, raw, headers: { 'content-type': 'application/json' } });
      expect(put.status).toBe(202);
      expect((await call(sim, 'GET', DEPOT, { token: accessToken })).body).toMatchObject({ depotConfiguration: { isOfflineDepot: true, port: depot.port } });

      for (const bad of [{ isOfflineDepot: 'yes' }, { port: 'https' }, { port: '99999' }]) {
        const refused = await call(sim, 'PUT', DEPOT, {
          token: accessToken,
          body: { offlineAccount: { username: 'u', password: 'p' }, depotConfiguration: { isOfflineDepot: true, hostname: 'localhost', port: 443, ...bad } },
        });
        expect(refused.status, JSON.stringify(bad)).toBe(400);
      }
    });
  });

  it('refuses a hostname that is not a host name or an address, and takes IPv6 literals', async () => {
    await withSim(async (sim) => {
      const { accessToken } = await login(sim);
      for (const hostname of [
        'user@depot.lab.local',
        'depot.lab.local/PROD',
        'depot#x',
        `localhost:${depot.port}`,
        'depot lab',
        'depot\tlab',
        'depot\u0007.lab',
        'https://depot.lab.local',
      ]) {
        const refused = await call(sim, 'PUT', DEPOT, { token: accessToken, body: depotSettings(hostname, depot.port) });
        expect(refused.status, hostname).toBe(400);
        expect((refused.body as { errorCode: string }).errorCode).toBe('INVALID_DEPOT_SETTINGS');
      }
      // An address is a host: these go on to the connection (and fail there, not as bad input).
      for (const hostname of ['::1', '[::1]', '127.0.0.1']) {
        const tried = await call(sim, 'PUT', DEPOT, { token: accessToken, body: depotSettings(hostname, depot.port) });
        expect((tried.body as { errorCode: string }).errorCode, hostname).not.toBe('INVALID_DEPOT_SETTINGS');
      }
    });
  });
});

describe('a depot whose certificate the installer cannot verify (the body a 9.0.1 installer returned, vmware/Holodeck#67)', () => {
  it('answers 403 with exactly the fields and words of the real body', async () => {
    await withSim(async (sim) => {
      const { accessToken } = await login(sim);
      const failed = await call(sim, 'PUT', DEPOT, { token: accessToken, body: depotSettings(depot.host, depot.port) });
      expect(failed.status).toBe(403);
      const body = failed.body as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(['arguments', 'causes', 'errorCode', 'message', 'referenceToken', 'remediationMessage']);
      expect(body).toEqual({
        errorCode: 'VMWARE_DEPOT_CONNECT_FAILURE',
        arguments: ['Secure protocol communication error, check logs for more details'],
        message:
          'Failed to connect to VMware depot with the provided user credentials. Cause: Secure protocol communication error, check logs for more details.',
        remediationMessage: 'Please verify the depot credentials for user are correct, check your connection to the depot and try command again.',
        causes: [
          {
            type: 'com.vmware.evo.sddc.lcm.model.depot.exception.DepotConnectionFailureException',
            message: 'Secure protocol communication error, check logs for more details',
          },
        ],
        referenceToken: expect.stringMatching(/^[0-9A-F]{6}$/),
      });
    });
  });
});

describe('safety of the simulated installer', () => {
  it('refuses a depot update to a token without a depot or system write scope', async () => {
    await withSim(
      async (sim) => {
        const { accessToken } = await login(sim);
        const refused = await call(sim, 'PUT', DEPOT, { token: accessToken, body: depotSettings(depot.host, depot.port) });
        expect(refused.status).toBe(403);
        expect(sim.logs.join('\n')).not.toContain(`HEAD https://localhost:${depot.port}`);
      },
      { scopes: { [USER]: ['CERT_READ', 'DEPOT_READ', 'SYSTEM_READ'] } },
    );
  });

  it('stops reading a catalog larger than it would ever be', async () => {
    // A hostile depot: an endless catalog after a HEAD that promises nothing.
    const server = createServer({ cert: leaf.chainPem, key: leaf.keyPem }, (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.method === 'HEAD') return res.end();
      const chunk = Buffer.alloc(1 << 20, 0x20);
      const pump = () => {
        while (res.write(chunk));
      };
      res.on('drain', pump);
      res.on('close', () => res.off('drain', pump));
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await withSim(async (sim) => {
        const { accessToken } = await login(sim);
        await call(sim, 'POST', CERTS, { token: accessToken, body: { certificate: depot.ca.certPem, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' } });
        const refused = await call(sim, 'PUT', DEPOT, { token: accessToken, body: depotSettings('localhost', (server.address() as AddressInfo).port) });
        expect(refused.status).toBe(400);
        expect((refused.body as { message: string }).message).toMatch(/larger than \d+ bytes/);
      });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('keeps CR, LF and other control characters of a request out of its log lines', async () => {
    await withSim(async (sim) => {
      const { accessToken } = await login(sim);
      const before = sim.logs.length;
      await call(sim, 'DELETE', `${CERTS}/x%0d%0a2026-01-01T00:00:00.000Z%20INFO%20%20[forged]%20line`, { token: accessToken });
      const added = sim.logs.slice(before);
      expect(added.some((l) => l.includes('x\\r\\n2026-01-01T00:00:00.000Z INFO  [forged] line'))).toBe(true);
      expect(added.every((l) => !/[\r\n]/.test(l))).toBe(true);
    });
    const log = new ServiceLog(() => 0);
    log.write('INFO', 'test', 'a\u001b]0;title\u0007b');
    expect(log.lines).toEqual(['1970-01-01T00:00:00.000Z INFO  [test] a\\x1b]0;title\\x07b']);
  });
});

describe('depot trust sent with the settings (the 9.1.1 API)', () => {
  it('trusts depotConfiguration.trustedCertificates from 9.1.1 on, keeping them in the store; 9.1.0 ignores the field', async () => {
    const body = {
      ...depotSettings('localhost', depot.port),
      depotConfiguration: { isOfflineDepot: true, hostname: 'localhost', port: depot.port, trustedCertificates: [depot.ca.certPem] },
    };
    await withSim(
      async (sim) => {
        const { accessToken } = await login(sim);
        expect((await call(sim, 'PUT', DEPOT, { token: accessToken, body })).status).toBe(202);
        // Into the appliance's store, as 9.1.1 does: listed with the others.
        const listed = (await call(sim, 'GET', CERTS, { token: accessToken })).body as { elements: Array<{ certificate: string }> };
        expect(listed.elements.map((e) => e.certificate.replace(/\s+/g, ''))).toEqual([depot.ca.certPem.replace(/\s+/g, '')]);
        const bad = { ...body, depotConfiguration: { ...body.depotConfiguration, trustedCertificates: ['not a certificate'] } };
        expect((await call(sim, 'PUT', DEPOT, { token: accessToken, body: bad })).status).toBe(400);
      },
      { version: '9.1.1.0.25400000' },
    );
    await withSim(
      async (sim) => {
        const { accessToken } = await login(sim);
        const ignored = await call(sim, 'PUT', DEPOT, { token: accessToken, body });
        expect(ignored.status).toBe(403);
        expect((ignored.body as { errorCode: string }).errorCode).toBe('VMWARE_DEPOT_CONNECT_FAILURE');
      },
      { version: '9.1.0.0.25368698' },
    );
  });
});

describe('an invented FQDN for the depot (--resolve)', () => {
  it('reaches the depot by a name no DNS knows, checking the certificate against that name', async () => {
    await withSim(
      async (sim) => {
        const { accessToken } = await login(sim);
        await call(sim, 'POST', CERTS, { token: accessToken, body: { certificate: depot.ca.certPem, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' } });
        const put = await call(sim, 'PUT', DEPOT, { token: accessToken, body: depotSettings(LAB_FQDN, fqdnDepot.port) });
        expect(put.status).toBe(202);
        // The name resolves, but the other depot's certificate does not name it.
        const wrong = await call(sim, 'PUT', DEPOT, { token: accessToken, body: depotSettings(LAB_FQDN, depot.port) });
        expect(wrong.status).toBe(403);
        expect(sim.logs.join('\n')).toContain(`No subject alternative DNS name matching ${LAB_FQDN} found.`);
      },
      { resolve: { [LAB_FQDN]: '127.0.0.1' } },
    );
    await withSim(async (sim) => {
      const { accessToken } = await login(sim);
      const unknown = await call(sim, 'PUT', DEPOT, { token: accessToken, body: depotSettings(LAB_FQDN, fqdnDepot.port) });
      expect((unknown.body as { errorCode: string }).errorCode).toBe('DEPOT_UNKNOWN_HOST');
    });
  });
});

describe('curl one-liners', () => {
  it('get a token with -d and read appliance-info bare', async () => {
    await withSim(async (sim) => {
      const caFile = join(tmp.dir, 'sim-ca.pem');
      await writeFile(caFile, sim.caPem);
      const token = await run('curl', [
        '-sS',
        '-w',
        '\n%{http_code}',
        '--cacert',
        caFile,
        '-H',
        'Content-Type: application/json',
        '-d',
        JSON.stringify({ username: USER, password: PASSWORD }),
        `${sim.url}/v1/tokens`,
      ]);
      const [body, code] = token.stdout.split('\n');
      expect(code).toBe('200');
      expect(JSON.parse(body!)).toMatchObject({ accessToken: expect.any(String), refreshToken: { id: expect.any(String) } });
      const info = await run('curl', ['-sS', '--cacert', caFile, `${sim.url}/v1/system/appliance-info`]);
      expect(JSON.parse(info.stdout)).toMatchObject({ role: 'VcfInstaller' });
    });
  });
});
