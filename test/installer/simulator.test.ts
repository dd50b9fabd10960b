import { execFile } from 'node:child_process';
import { X509Certificate, createHmac } from 'node:crypto';
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SignJWT, UnsecuredJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import { startDepotServer } from '../../src/server/index.js';
import { brokenServerCert } from '../helpers/certs.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER, call, depotCa, depotSettings, login, startSim, startTestDepot, type TestDepot } from './helpers.js';
import { withSim } from '../helpers/installer-sim.js';
import { useTestDepot } from '../helpers/installer-sim.js';

const run = promisify(execFile);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ALIAS = /^vcf_[A-Za-z0-9.-]+_([0-9a-f]{64})$/;
const CERTS = '/v1/sddc-manager/trusted-certificates';
const DEPOT = '/v1/system/settings/depot';

let dir: string;
let depot: TestDepot;
useTestDepot('depotkit-installer-sim-', (started) => ({ dir, depot } = started));

/** A compact HS256 JWS made by hand from RFC 7515, for headers jose will not sign (an unknown critical extension). */
function bySpec(header: object, claims: object, key: Buffer): string {
  const input = [header, claims].map((part) => Buffer.from(JSON.stringify(part)).toString('base64url')).join('.');
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}

describe('tokens', () => {
  it('issues an HS256 JWT with exactly the documented claims, living 3600 s, and a UUID refresh token', async () => {
    await withSim(async (sim) => {
      const pair = await login(sim);
      expect(decodeProtectedHeader(pair.accessToken).alg).toBe('HS256');
      const claims = decodeJwt(pair.accessToken);
      expect(Object.keys(claims).sort()).toEqual(['aud', 'exp', 'iat', 'isIssuedForJwt', 'iss', 'jti', 'name', 'nbf', 'role', 'scope', 'sub', 'user']);
      expect(claims.jti).toMatch(UUID);
      expect(claims.nbf).toBe(claims.iat);
      expect(claims.exp! - claims.iat!).toBe(3600);
      expect(Math.abs(claims.iat! - Date.now() / 1000)).toBeLessThan(60);
      expect([claims.sub, claims.user, claims.name]).toEqual([USER, USER, USER]);
      expect(claims.iss).toBe('vcf-auth');
      expect(claims.aud).toBe('sddc-services');
      expect(claims.scope).toEqual(expect.arrayContaining(['CERT_READ', 'CERT_WRITE', 'CA_READ', 'CA_WRITE']));
      expect(claims.role).toEqual(['ADMIN']);
      expect(claims.isIssuedForJwt).toBe(false);
      expect(pair.refreshToken.id).toMatch(UUID);
    });
  });

  it('refuses wrong credentials with an installer error body and keeps the password out of the log', async () => {
    await withSim(async (sim) => {
      const reply = await call(sim, 'POST', '/v1/tokens', { body: { username: USER, password: 'wrong-password' } });
      expect(reply.status).toBe(401);
      expect(reply.body).toMatchObject({ errorCode: 'INVALID_CREDENTIALS', errorType: 'ERROR', arguments: [], causes: [], nestedErrors: [] });
      expect((reply.body as { referenceToken: string }).referenceToken).toMatch(/^[0-9A-F]{6}$/);
      expect((await call(sim, 'POST', '/v1/tokens', { body: { username: USER } })).status).toBe(400);
      await login(sim);
      expect(sim.logs.join('\n')).not.toContain(PASSWORD);
    });
  });

  it('refreshes with the id quoted (spec) or raw (field client), and refuses a revoked or unknown id', async () => {
    await withSim(async (sim) => {
      const pair = await login(sim);
      const quoted = await call(sim, 'PATCH', '/v1/tokens/access-token/refresh', { body: pair.refreshToken.id });
      expect(quoted.status).toBe(200);
      expect(typeof quoted.body).toBe('string');
      expect(decodeJwt(quoted.body as string).jti).not.toBe(decodeJwt(pair.accessToken).jti);
      const raw = await call(sim, 'PATCH', '/v1/tokens/access-token/refresh', { raw: pair.refreshToken.id });
      expect(raw.status).toBe(200);
      expect((await call(sim, 'GET', CERTS, { token: raw.body as string })).status).toBe(200);

      expect((await call(sim, 'DELETE', '/v1/tokens/refresh-token', { body: pair.refreshToken.id })).status).toBe(204);
      const revoked = await call(sim, 'PATCH', '/v1/tokens/access-token/refresh', { body: pair.refreshToken.id });
      expect(revoked.status).toBe(404);
      expect((revoked.body as { errorCode: string }).errorCode).toBe('REFRESH_TOKEN_NOT_FOUND');
      expect((await call(sim, 'PATCH', '/v1/tokens/access-token/refresh', { raw: '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
    });
  });

  it('refuses a token signed with its own secret that lacks exp (it would never expire)', async () => {
    const stateFile = join(dir, 'no-exp-state.json');
    await withSim(
      async (sim) => {
        const pair = await login(sim);
        const { secret } = JSON.parse(await readFile(stateFile, 'utf8')) as { secret: string };
        const { exp: _exp, ...claims } = decodeJwt(pair.accessToken);
        const key = Buffer.from(secret, 'hex');
        const sign = (c: object) => new SignJWT({ ...c }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(key);
        // The same claims re-signed are accepted: only the missing exp is refused.
        expect((await call(sim, 'GET', CERTS, { token: await sign({ ...claims, exp: _exp }) })).status).toBe(200);
        const reply = await call(sim, 'GET', CERTS, { token: await sign(claims) });
        expect(reply.status).toBe(401);
        expect((reply.body as { errorCode: string }).errorCode).toBe('Unauthenticated');
      },
      { stateFile },
    );
  });

  it('refuses expired, tampered, alg:none, foreign and missing tokens with 401', async () => {
    let now = Date.now();
    await withSim(
      async (sim) => {
        const pair = await login(sim);
        expect((await call(sim, 'GET', CERTS, { token: pair.accessToken })).status).toBe(200);

        const [header, payload, signature] = pair.accessToken.split('.') as [string, string, string];
        const claims = decodeJwt(pair.accessToken);
        const tamperedPayload = Buffer.from(JSON.stringify({ ...claims, sub: 'mallory', user: 'mallory' })).toString('base64url');
        const unsigned = new UnsecuredJWT({ ...claims }).encode();
        const other = await withSim((s) => login(s));
        const refused = {
          missing: undefined,
          tampered: `${header}.${tamperedPayload}.${signature}`,
          badSignature: `${header}.${payload}.${signature.slice(0, -4)}AAAA`,
          algNone: unsigned,
          foreign: other.accessToken,
          garbage: 'not-a-jwt',
        };
        for (const [kind, token] of Object.entries(refused)) {
          const reply = await call(sim, 'GET', CERTS, { token });
          expect(reply.status, kind).toBe(401);
          expect((reply.body as { errorCode: string }).errorCode, kind).toBe('Unauthenticated');
        }

        now += 3599_000;
        expect((await call(sim, 'GET', CERTS, { token: pair.accessToken })).status).toBe(200);
        now += 2_000;
        const expired = await call(sim, 'GET', CERTS, { token: pair.accessToken });
        expect(expired.status).toBe(401);
        expect((expired.body as { message: string }).message).toMatch(/expired/);
        // The refresh token outlives the access token: a refresh gives a working one.
        const fresh = await call(sim, 'PATCH', '/v1/tokens/access-token/refresh', { body: pair.refreshToken.id });
        expect((await call(sim, 'GET', CERTS, { token: fresh.body as string })).status).toBe(200);
        now += 24 * 3600_000;
        expect((await call(sim, 'PATCH', '/v1/tokens/access-token/refresh', { body: pair.refreshToken.id })).status).toBe(404);
      },
      { clock: () => now },
    );
  });

  it('takes a token another HS256 signer made of its claims, and refuses one with another issuer, audience, a later nbf, critical extensions or claims of the wrong type', async () => {
    const stateFile = join(dir, 'claims-state.json');
    await withSim(
      async (sim) => {
        const pair = await login(sim);
        const { secret } = JSON.parse(await readFile(stateFile, 'utf8')) as { secret: string };
        const claims = decodeJwt(pair.accessToken);
        const key = Buffer.from(secret, 'hex');
        const sign = (c: object) => new SignJWT({ ...c }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(key);
        const status = async (token: string) => (await call(sim, 'GET', CERTS, { token })).status;
        expect(await status(await sign(claims))).toBe(200);
        expect(await status(await sign({ ...claims, aud: ['other', 'sddc-services'] }))).toBe(200);
        const refused = {
          issuer: await sign({ ...claims, iss: 'someone-else' }),
          audience: await sign({ ...claims, aud: 'other-services' }),
          notYet: await sign({ ...claims, nbf: claims.iat! + 600 }),
          crit: bySpec({ alg: 'HS256', typ: 'JWT', crit: ['urn:example:policy'], 'urn:example:policy': 'strict' }, claims, key),
          stringExp: await sign({ ...claims, exp: String(claims.exp) }),
          noScope: await sign({ ...claims, scope: 'CERT_READ' }),
        };
        for (const [kind, token] of Object.entries(refused)) expect(await status(token), kind).toBe(401);
      },
      { stateFile },
    );
  });
});

describe('trusted certificates', () => {
  it('imports a CA with the documented alias, lists it, refuses the same certificate with 409 and deletes by alias', async () => {
    await withSim(async (sim) => {
      const { accessToken } = await login(sim);
      const ca = await depotCa();
      const added = await call(sim, 'POST', CERTS, { token: accessToken, body: { certificate: ca.certPem, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' } });
      expect(added.status).toBe(200);
      const [element] = (added.body as { elements: Array<{ alias: string; certificate: string }> }).elements;
      const fingerprint = new X509Certificate(ca.certPem).fingerprint256.replace(/:/g, '').toLowerCase();
      expect(element!.alias).toMatch(ALIAS);
      expect(ALIAS.exec(element!.alias)![1]).toBe(fingerprint);
      expect(element!.alias).toBe(`vcf_depotkit-installer-test-CA_${fingerprint}`);
      expect(element!.certificate.endsWith('-----END CERTIFICATE-----\n')).toBe(true);
      expect(new X509Certificate(element!.certificate).fingerprint256).toBe(new X509Certificate(ca.certPem).fingerprint256);

      const list = await call(sim, 'GET', CERTS, { token: accessToken });
      expect((list.body as { elements: unknown[] }).elements).toEqual([element]);

      const again = await call(sim, 'POST', CERTS, {
        token: accessToken,
        body: { certificate: ca.certPem.replace(/\n/g, '\r\n'), certificateUsageType: 'TRUSTED_FOR_OUTBOUND' },
      });
      expect(again.status).toBe(409);
      expect((again.body as { errorCode: string }).errorCode).toBe('TRUSTED_CERTIFICATE_ALREADY_EXISTS');

      expect((await call(sim, 'DELETE', `${CERTS}/${element!.alias}`, { token: accessToken })).status).toBe(204);
      expect((await call(sim, 'DELETE', `${CERTS}/${element!.alias}`, { token: accessToken })).status).toBe(404);
      expect((await call(sim, 'GET', CERTS, { token: accessToken })).body).toMatchObject({ elements: [] });
    });
  });

  it('refuses bad PEM with 400 and an unknown usage type, and needs a write scope to import', async () => {
    await withSim(
      async (sim) => {
        const { accessToken } = await login(sim);
        const ca = await depotCa();
        const lines = ca.certPem.trim().split('\n');
        const bad = {
          notPem: 'hello',
          truncated: lines.slice(0, 5).join('\n'),
          garbled: [lines[0], 'AAAA' + lines[1]!.slice(4), ...lines.slice(2)].join('\n'),
          missing: undefined,
        };
        for (const [kind, certificate] of Object.entries(bad)) {
          const reply = await call(sim, 'POST', CERTS, { token: accessToken, body: { certificate, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' } });
          expect(reply.status, kind).toBe(400);
          expect((reply.body as { errorCode: string }).errorCode, kind).toBe('INVALID_CERTIFICATE');
        }
        const usage = await call(sim, 'POST', CERTS, { token: accessToken, body: { certificate: ca.certPem, certificateUsageType: 'TRUSTED_FOR_EVERYTHING' } });
        expect(usage.status).toBe(400);

        const reader = await login(sim, 'auditor', 'auditor-pass');
        expect((await call(sim, 'GET', CERTS, { token: reader.accessToken })).status).toBe(200);
        const denied = await call(sim, 'POST', CERTS, {
          token: reader.accessToken,
          body: { certificate: ca.certPem, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' },
        });
        expect(denied.status).toBe(403);
        expect((denied.body as { errorCode: string }).errorCode).toBe('FORBIDDEN');
      },
      { users: { [USER]: PASSWORD, auditor: 'auditor-pass' }, scopes: { auditor: ['CERT_READ', 'CA_READ'] } },
    );
  });

  it('answers curl, an independent client, with the same shapes', async () => {
    await withSim(async (sim) => {
      const caFile = join(dir, 'sim-ca.pem');
      await writeFile(caFile, sim.caPem);
      const body = JSON.stringify({ username: USER, password: PASSWORD });
      const { stdout } = await run('curl', ['-sS', '--cacert', caFile, '-H', 'content-type: application/json', '-d', body, `${sim.url}/v1/tokens`]);
      const pair = JSON.parse(stdout) as { accessToken: string };
      const info = await run('curl', ['-sS', '--cacert', caFile, '-H', `authorization: Bearer ${pair.accessToken}`, `${sim.url}/v1/system/appliance-info`]);
      expect(JSON.parse(info.stdout)).toEqual({ role: 'VcfInstaller', version: expect.stringMatching(/^9\.1\./) });
    });
  });
});

describe('depot settings', () => {
  it('fails with the secure-protocol error until the CA is trusted, logs the fatal alert with the password masked, then succeeds', async () => {
    await withSim(async (sim) => {
      const { accessToken } = await login(sim);
      const before = await call(sim, 'GET', DEPOT, { token: accessToken });
      // Nothing configured yet: no account, no configuration.
      expect(before.body).toEqual({});

      const failed = await call(sim, 'PUT', DEPOT, { token: accessToken, body: depotSettings(depot.host, depot.port) });
      expect(failed.status).toBe(403);
      expect(failed.body).toMatchObject({
        errorCode: 'VMWARE_DEPOT_CONNECT_FAILURE',
        message:
          'Failed to connect to VMware depot with the provided user credentials. Cause: Secure protocol communication error, check logs for more details.',
      });
      const log = sim.logs.join('\n');
      expect(log).toMatch(new RegExp(`TLS fatal alert certificate_unknown against depot localhost:${depot.port}: .*unable to find valid certification path`));
      expect(log).toContain('"password":"*****"');
      expect(log).not.toContain(DEPOT_PASSWORD);
      // The failed attempt is kept with its status, never with the password.
      const attempted = await call(sim, 'GET', DEPOT, { token: accessToken });
      expect(attempted.body).toEqual({
        offlineAccount: { username: DEPOT_USER, status: 'UNKNOWN_FAILURE', message: expect.stringContaining('Secure protocol communication error') },
        depotConfiguration: { isOfflineDepot: true, hostname: 'localhost', port: depot.port },
      });

      await call(sim, 'POST', CERTS, { token: accessToken, body: { certificate: depot.ca.certPem, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' } });
      const ok = await call(sim, 'PUT', DEPOT, { token: accessToken, body: depotSettings(depot.host, depot.port) });
      expect(ok.status).toBe(202);
      const after = await call(sim, 'GET', DEPOT, { token: accessToken });
      expect(after.body).toEqual({
        offlineAccount: { username: DEPOT_USER, status: 'DEPOT_CONNECTION_SUCCESSFUL', message: expect.any(String) },
        depotConfiguration: { isOfflineDepot: true, hostname: 'localhost', port: depot.port },
      });
      expect(sim.logs.join('\n')).toMatch(
        /HEAD https:\/\/localhost:\d+\/PROD\/metadata\/productVersionCatalog\/v1\/productVersionCatalog\.json -> 200[\s\S]*GET https:.*productVersionCatalog\.json -> 200/,
      );
      expect(sim.logs.join('\n')).not.toContain(DEPOT_PASSWORD);
    });
  });

  it('refuses wrong depot credentials, an unreachable depot and a CA trusted only for inbound', async () => {
    await withSim(async (sim) => {
      const { accessToken } = await login(sim);
      await call(sim, 'POST', CERTS, { token: accessToken, body: { certificate: depot.ca.certPem, certificateUsageType: 'TRUSTED_FOR_INBOUND' } });
      const inbound = await call(sim, 'PUT', DEPOT, { token: accessToken, body: depotSettings(depot.host, depot.port) });
      expect((inbound.body as { errorCode: string }).errorCode).toBe('VMWARE_DEPOT_CONNECT_FAILURE');

      const alias = ((await call(sim, 'GET', CERTS, { token: accessToken })).body as { elements: Array<{ alias: string }> }).elements[0]!.alias;
      await call(sim, 'DELETE', `${CERTS}/${alias}`, { token: accessToken });
      await call(sim, 'POST', CERTS, { token: accessToken, body: { certificate: depot.ca.certPem, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' } });
      const wrong = await call(sim, 'PUT', DEPOT, { token: accessToken, body: depotSettings(depot.host, depot.port, 'not-the-password') });
      expect(wrong.status).toBe(400);
      expect((wrong.body as { errorCode: string }).errorCode).toBe('DEPOT_INVALID_CREDENTIAL');
      const statusNow = async () =>
        ((await call(sim, 'GET', DEPOT, { token: accessToken })).body as { offlineAccount: { status: string; password?: unknown } }).offlineAccount;
      expect(await statusNow()).toMatchObject({ username: DEPOT_USER, status: 'DEPOT_INVALID_CREDENTIAL' });
      expect(await statusNow()).not.toHaveProperty('password');
      // Credentials outside offlineAccount are dropped, as on the real installer: no user is set.
      const misplaced = await call(sim, 'PUT', DEPOT, {
        token: accessToken,
        body: { username: DEPOT_USER, password: DEPOT_PASSWORD, depotConfiguration: { isOfflineDepot: true, hostname: depot.host, port: depot.port } },
      });
      expect(misplaced.status).toBe(400);
      expect((misplaced.body as { errorCode: string }).errorCode).toBe('DEPOT_USER_NOT_SET');
      expect(await statusNow()).toMatchObject({ status: 'DEPOT_USER_NOT_SET' });

      const down = await call(sim, 'PUT', DEPOT, { token: accessToken, body: depotSettings('127.0.0.1', 1) });
      expect((down.body as { errorCode: string }).errorCode).toBe('DEPOT_NOT_AVAILABLE');
      expect(await statusNow()).toMatchObject({ status: 'DEPOT_NOT_AVAILABLE' });
      const unknown = await call(sim, 'PUT', DEPOT, { token: accessToken, body: depotSettings('no-such-host.invalid', 443) });
      expect((unknown.body as { errorCode: string }).errorCode).toBe('DEPOT_UNKNOWN_HOST');
      expect(await statusNow()).toMatchObject({ status: 'DEPOT_UNKNOWN_HOST' });
      const invalid = await call(sim, 'PUT', DEPOT, { token: accessToken, body: { depotConfiguration: { isOfflineDepot: true, hostname: 'x' } } });
      expect(invalid.status).toBe(400);
    });
  });

  it('checks host names strictly: a certificate without SAN or for another name fails even with its CA trusted', async () => {
    const ca = await depotCa();
    for (const kind of ['no-san', 'wrong-host'] as const) {
      const broken = brokenServerCert(ca, kind, 'localhost');
      const badDir = join(dir, kind);
      const bad = await startTestDepot(badDir, { cert: broken });
      try {
        await withSim(async (sim) => {
          const { accessToken } = await login(sim);
          await call(sim, 'POST', CERTS, { token: accessToken, body: { certificate: ca.certPem } });
          const reply = await call(sim, 'PUT', DEPOT, { token: accessToken, body: depotSettings('localhost', bad.port) });
          expect(reply.status, kind).toBe(403);
          expect((reply.body as { errorCode: string }).errorCode, kind).toBe('VMWARE_DEPOT_CONNECT_FAILURE');
          expect(sim.logs.join('\n'), kind).toMatch(
            kind === 'no-san' ? /No subject alternative names present/ : /No subject alternative DNS name matching localhost found/,
          );
        });
      } finally {
        await bad.close();
      }
    }
  });

  it('takes the 9.1 url field (https with a prefix, and plain http) and refuses it on 9.0', async () => {
    const root = join(dir, 'depot');
    const plain = await startDepotServer({ root, host: '127.0.0.1', port: 0 });
    try {
      await withSim(async (sim) => {
        const { accessToken } = await login(sim);
        const account = { username: DEPOT_USER, password: DEPOT_PASSWORD };
        // Credentials never go in clear text: http:// with an account is refused, an open http:// depot works.
        const clear = await call(sim, 'PUT', DEPOT, {
          token: accessToken,
          body: { offlineAccount: account, depotConfiguration: { isOfflineDepot: true, url: plain.url } },
        });
        expect(clear.status).toBe(400);
        expect((clear.body as { message: string }).message).toMatch(/only over HTTPS/);
        const http = await call(sim, 'PUT', DEPOT, { token: accessToken, body: { depotConfiguration: { isOfflineDepot: true, url: plain.url } } });
        expect(http.status).toBe(202);
        expect(http.body).toMatchObject({ depotConfiguration: { url: plain.url, hostname: '127.0.0.1', port: plain.port } });
        await call(sim, 'POST', CERTS, { token: accessToken, body: { certificate: depot.ca.certPem } });
        const prefixed = await call(sim, 'PUT', DEPOT, {
          token: accessToken,
          body: { offlineAccount: account, depotConfiguration: { isOfflineDepot: true, url: `https://localhost:${depot.port}/PROD` } },
        });
        // The URL names the folder that contains PROD; /PROD/PROD/... does not exist.
        expect((prefixed.body as { errorCode: string }).errorCode).toBe('DEPOT_NOT_AVAILABLE');
        const https = await call(sim, 'PUT', DEPOT, {
          token: accessToken,
          body: { offlineAccount: account, depotConfiguration: { isOfflineDepot: true, url: `https://localhost:${depot.port}/` } },
        });
        expect(https.status).toBe(202);
      });
      await withSim(
        async (sim) => {
          const { accessToken } = await login(sim);
          const reply = await call(sim, 'PUT', DEPOT, { token: accessToken, body: { depotConfiguration: { isOfflineDepot: true, url: plain.url } } });
          expect(reply.status).toBe(400);
          expect((await call(sim, 'GET', '/v1/system/appliance-info', { token: accessToken })).body).toEqual({
            role: 'VcfInstaller',
            version: '9.0.2.0.24000000',
          });
        },
        { version: '9.0.2.0.24000000' },
      );
    } finally {
      await plain.close();
    }
  });
});

describe('state file', () => {
  it('survives a restart: tokens, trusted certificates and depot settings; written 0600, atomically, without the depot password', async () => {
    const stateFile = join(dir, 'state', 'installer.json');
    const sim = await startSim({ stateFile });
    const pair = await login(sim);
    await call(sim, 'POST', CERTS, { token: pair.accessToken, body: { certificate: depot.ca.certPem } });
    expect((await call(sim, 'PUT', DEPOT, { token: pair.accessToken, body: depotSettings(depot.host, depot.port) })).status).toBe(202);
    await sim.close();

    expect((await stat(stateFile)).mode & 0o777).toBe(0o600);
    expect(await readdir(join(dir, 'state'))).toEqual(['installer.json']);
    const text = await readFile(stateFile, 'utf8');
    expect(text).not.toContain(DEPOT_PASSWORD);
    expect(text).not.toContain(PASSWORD);

    const again = await startSim({ stateFile });
    try {
      expect((await call(again, 'GET', CERTS, { token: pair.accessToken })).body).toMatchObject({ elements: [{ alias: expect.stringMatching(ALIAS) }] });
      expect((await call(again, 'GET', DEPOT, { token: pair.accessToken })).body).toMatchObject({ offlineAccount: { status: 'DEPOT_CONNECTION_SUCCESSFUL' } });
      expect((await call(again, 'PATCH', '/v1/tokens/access-token/refresh', { body: pair.refreshToken.id })).status).toBe(200);
    } finally {
      await again.close();
    }
    await writeFile(stateFile, '{"version": 7}');
    await expect(startSim({ stateFile })).rejects.toThrow(/not an installer simulator state/);
  });
});
