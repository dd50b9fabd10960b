import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InstallerApiError, InstallerClient, InstallerConnectionError, ensureTrusted, installerStatus, pushDepot } from '../../src/installer/index.js';
import { issueServerCert } from '../../src/pki/index.js';
import { startDepotServer } from '../../src/server/index.js';
import { tempDir } from '../helpers/cli.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER, depotCa, expectRequestMatchesSpec, startSim, startTestDepot, type TestDepot } from './helpers.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
let depot: TestDepot;

beforeAll(async () => {
  tmp = await tempDir('depotkit-installer-client-');
  depot = await startTestDepot(tmp.dir);
});
afterAll(async () => {
  await depot?.close();
  await tmp?.cleanup();
});

/** A tiny HTTPS server with scripted answers, for what a well-behaved installer never does. */
async function scripted(answer: (n: number, method: string, url: string) => { status: number; body?: unknown } | 'hang'): Promise<{ url: string; caPem: string; count: () => number; close: () => Promise<void> }> {
  const cert = await issueServerCert(await depotCa(), { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  let n = 0;
  const server: Server = createServer({ key: cert.keyPem, cert: cert.certPem }, (req, res) => {
    const reply = answer(++n, req.method ?? '', req.url ?? '');
    req.resume();
    if (reply === 'hang') return;
    res.writeHead(reply.status, { 'content-type': 'application/json' });
    res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    caPem: (await depotCa()).certPem,
    count: () => n,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const pair = { accessToken: 'x.y.z', refreshToken: { id: 'r' } };

/** An HTTPS proxy in front of the simulator that records what the client sends. */
async function recordingProxy(target: { url: string; caPem: string }): Promise<{ url: string; caPem: string; seen: Array<{ method: string; path: string; contentType?: string; body: unknown }>; close: () => Promise<void> }> {
  const cert = await issueServerCert(await depotCa(), { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  const agent = new Agent({ connect: { ca: target.caPem } });
  const seen: Array<{ method: string; path: string; contentType?: string; body: unknown }> = [];
  const server: Server = createServer({ key: cert.keyPem, cert: cert.certPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method!, path: req.url!, contentType: req.headers['content-type'], body: text === '' ? undefined : JSON.parse(text) });
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'content-type'] as const) if (req.headers[name]) headers[name] = req.headers[name]!;
      void request(`${target.url}${req.url}`, { method: req.method as 'GET', headers, body: text === '' ? undefined : text, dispatcher: agent }).then(async (up) => {
        const body = await up.body.text();
        res.writeHead(up.statusCode, { 'content-type': 'application/json' });
        res.end(body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    caPem: (await depotCa()).certPem,
    seen,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await agent.close();
    },
  };
}

describe('installer client', () => {
  it('refreshes before expiry, refreshes once on a 401, logs in again when the refresh token is gone, revokes on close', async () => {
    let simNow = Date.now();
    let clientNow = simNow;
    const sim = await startSim({ clock: () => simNow });
    try {
      const client = await InstallerClient.connect({ url: sim.url, user: USER, password: PASSWORD, trust: { caPems: [sim.caPem] }, clock: () => clientNow });
      await client.listTrusted();
      expect(client.stats).toMatchObject({ logins: 1, refreshes: 0 });
      expect(client.tokenSecondsLeft()).toBeGreaterThan(3500);

      // Close to expiry: the client refreshes before calling.
      simNow += 3590_000;
      clientNow += 3590_000;
      await client.listTrusted();
      expect(client.stats).toMatchObject({ logins: 1, refreshes: 1 });
      expect(sim.logs.filter((l) => l.includes('PATCH /v1/tokens/access-token/refresh 200'))).toHaveLength(1);

      // The server's clock runs ahead: the token the client trusts is refused once, refreshed, and the call goes through.
      simNow += 3700_000;
      await client.listTrusted();
      expect(client.stats).toMatchObject({ logins: 1, refreshes: 2 });

      // A day later the refresh token is gone too: a new log-in.
      simNow += 25 * 3600_000;
      clientNow = simNow;
      await client.applianceInfo();
      expect(client.stats.logins).toBe(2);

      await client.close();
      expect(sim.logs.some((l) => l.includes('DELETE /v1/tokens/refresh-token 204'))).toBe(true);
      expect(sim.logs.join('\n')).not.toContain(PASSWORD);
    } finally {
      await sim.close();
    }
  });

  it('keys errors on errorCode and shows message and remediation', async () => {
    const sim = await startSim();
    try {
      const err = await InstallerClient.connect({ url: sim.url, user: USER, password: 'wrong', trust: { caPems: [sim.caPem] } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InstallerApiError);
      expect((err as InstallerApiError).errorCode).toBe('INVALID_CREDENTIALS');
      expect((err as InstallerApiError).status).toBe(401);
      expect((err as InstallerApiError).message).toBe('Log-in failed: INVALID_CREDENTIALS: Invalid username or password.');
      expect((err as InstallerApiError).hint).toBe('Check the user name and password.');

      const client = await InstallerClient.connect({ url: sim.url, user: USER, password: PASSWORD, trust: { caPems: [sim.caPem] } });
      try {
        const failed = await pushDepot(client, { hostname: depot.host, port: depot.port, username: DEPOT_USER, password: DEPOT_PASSWORD }).catch((e: unknown) => e);
        expect(failed).toBeInstanceOf(InstallerApiError);
        expect((failed as InstallerApiError).errorCode).toBe('VMWARE_DEPOT_CONNECT_FAILURE');
        expect((failed as InstallerApiError).message).toContain('Secure protocol communication error');
        expect((failed as InstallerApiError).hint).toMatch(/TRUSTED_FOR_OUTBOUND/);

        const trusted = await ensureTrusted(client, [depot.ca.certPem]);
        expect(trusted).toEqual([expect.objectContaining({ action: 'imported', alias: expect.stringMatching(/^vcf_.+_[0-9a-f]{64}$/) })]);
        expect(await ensureTrusted(client, [depot.ca.certPem])).toEqual([expect.objectContaining({ action: 'already-trusted', alias: trusted[0]!.alias })]);
        const pushed = await pushDepot(client, { url: `https://localhost:${depot.port}`, username: DEPOT_USER, password: DEPOT_PASSWORD });
        expect(pushed).toMatchObject({ action: 'updated', ok: true, status: 'DEPOT_CONNECTION_SUCCESSFUL' });
        const again = await pushDepot(client, { url: `https://localhost:${depot.port}`, username: DEPOT_USER, password: DEPOT_PASSWORD });
        expect(again.action).toBe('unchanged');
        const status = await installerStatus(client);
        expect(status.trusted[0]!.sha256).toBe(trusted[0]!.sha256);
        expect(status.depot.offlineAccount?.status).toBe('DEPOT_CONNECTION_SUCCESSFUL');
      } finally {
        await client.close();
      }
    } finally {
      await sim.close();
    }
  });

  it('sends only requests the published spec accepts, JSON with its content type', async () => {
    const sim = await startSim();
    const proxy = await recordingProxy(sim);
    try {
      const client = await InstallerClient.connect({ url: proxy.url, user: USER, password: PASSWORD, trust: { caPems: [proxy.caPem] } });
      await client.refresh();
      await ensureTrusted(client, [depot.ca.certPem]);
      await pushDepot(client, { hostname: depot.host, port: depot.port, username: DEPOT_USER, password: DEPOT_PASSWORD });
      await pushDepot(client, { url: `https://localhost:${depot.port}`, username: DEPOT_USER, password: DEPOT_PASSWORD });
      await installerStatus(client);
      const alias = (await client.listTrusted()).elements[0]!.alias;
      expect(await client.deleteTrusted(alias)).toBe(true);
      await client.close();
      const operations = new Set(proxy.seen.map((r) => `${r.method} ${r.path.replace(/trusted-certificates\/.+$/, 'trusted-certificates/{alias}')}`));
      expect([...operations].sort()).toEqual([
        'DELETE /v1/sddc-manager/trusted-certificates/{alias}',
        'DELETE /v1/tokens/refresh-token',
        'GET /v1/sddc-manager/trusted-certificates',
        'GET /v1/system/appliance-info',
        'GET /v1/system/settings/depot',
        'PATCH /v1/tokens/access-token/refresh',
        'POST /v1/sddc-manager/trusted-certificates',
        'POST /v1/tokens',
        'PUT /v1/system/settings/depot',
      ]);
      for (const r of proxy.seen) {
        expectRequestMatchesSpec(r.method, r.path, r.body);
        if (r.body !== undefined) expect(r.contentType).toBe('application/json');
      }
    } finally {
      await proxy.close();
      await sim.close();
    }
  });

  it('sends an http or prefixed depot URL as the 9.1 url field, and refuses it for a 9.0 installer before sending anything', async () => {
    const plain = await startDepotServer({ root: join(tmp.dir, 'depot'), host: '127.0.0.1', port: 0 });
    try {
      for (const version of ['9.1.0.0.25368698', '9.0.2.0.24000000']) {
        const sim = await startSim({ version });
        const client = await InstallerClient.connect({ url: sim.url, user: USER, password: PASSWORD, trust: { caPems: [sim.caPem] } });
        try {
          const outcome = await pushDepot(client, { url: plain.url }).catch((e: unknown) => e);
          if (version.startsWith('9.1')) {
            expect(outcome).toMatchObject({ action: 'updated', ok: true, settings: { depotConfiguration: { url: plain.url } } });
          } else {
            expect((outcome as Error).message).toBe("The installer's version 9.0.2.0.24000000 takes the depot as a host and port over HTTPS; plain HTTP needs 9.1 or later.");
            expect(sim.logs.some((l) => l.includes('PUT /v1/system/settings/depot'))).toBe(false);
          }
        } finally {
          await client.close();
          await sim.close();
        }
      }
    } finally {
      await plain.close();
    }
  });

  it('treats a 409 as already trusted and finds the alias when the import answers an empty page (the vendor example)', async () => {
    const ca = await depotCa();
    const listed = { elements: [{ alias: 'vcf_59:24:D5', certificate: ca.certPem }] };
    for (const importStatus of [409, 200]) {
      let lists = 0;
      const server = await scripted((_n, method, url) => {
        if (url === '/v1/tokens') return { status: 200, body: pair };
        if (method === 'GET') return { status: 200, body: lists++ === 0 ? { elements: [] } : listed };
        return importStatus === 409 ? { status: 409, body: { errorCode: 'TRUSTED_CERTIFICATE_ALREADY_EXISTS', message: 'exists' } } : { status: 200, body: { elements: [] } };
      });
      try {
        const client = await InstallerClient.connect({ url: server.url, user: USER, password: PASSWORD, trust: { caPems: [server.caPem] } });
        const [outcome] = await ensureTrusted(client, [ca.certPem]);
        expect(outcome).toMatchObject({ action: importStatus === 409 ? 'already-trusted' : 'imported', alias: 'vcf_59:24:D5' });
        await client.close();
      } finally {
        await server.close();
      }
    }
  });

  it('retries with back-off on 5xx and network errors only, and gives up with a clear sentence', async () => {
    const flaky = await scripted((n) => (n <= 2 ? { status: 503, body: { errorCode: 'UNAVAILABLE' } } : { status: 201, body: pair }));
    try {
      const client = await InstallerClient.connect({ url: flaky.url, user: USER, password: PASSWORD, trust: { caPems: [flaky.caPem] }, backoffMs: 5 });
      expect(client.stats.retries).toBe(2);
      expect(flaky.count()).toBe(3);
      await client.close();
    } finally {
      await flaky.close();
    }

    const refusing = await scripted(() => ({ status: 400, body: { errorCode: 'BAD_REQUEST', message: 'no', remediationMessage: 'fix it' } }));
    try {
      const err = await InstallerClient.connect({ url: refusing.url, user: USER, password: PASSWORD, trust: { caPems: [refusing.caPem] }, backoffMs: 5 }).catch((e: unknown) => e);
      expect((err as InstallerApiError).errorCode).toBe('BAD_REQUEST');
      expect(refusing.count()).toBe(1);
    } finally {
      await refusing.close();
    }

    const closed = await scripted(() => ({ status: 200 }));
    const url = closed.url;
    await closed.close();
    const client = new InstallerClient(new URL(url), { url, user: USER, password: PASSWORD, retries: 2, backoffMs: 5 });
    const down = await client.login().catch((e: unknown) => e);
    expect(down).toBeInstanceOf(InstallerConnectionError);
    expect((down as Error).message).toMatch(/^Cannot reach the installer 127\.0\.0\.1:\d+: ECONNREFUSED\.$/);
    expect(client.stats).toMatchObject({ requests: 3, retries: 2 });
  });

  it('times out a silent installer, and verifies its certificate unless told --insecure', async () => {
    const silent = await scripted(() => 'hang');
    try {
      const err = await InstallerClient.connect({ url: silent.url, user: USER, password: PASSWORD, trust: { caPems: [silent.caPem] }, timeoutMs: 300, retries: 0 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InstallerConnectionError);
      expect((err as Error).message).toMatch(/UND_ERR_HEADERS_TIMEOUT/);
    } finally {
      await silent.close();
    }

    const sim = await startSim();
    try {
      const untrusted = await InstallerClient.connect({ url: sim.url, user: USER, password: PASSWORD }).catch((e: unknown) => e);
      expect(untrusted).toBeInstanceOf(InstallerConnectionError);
      expect((untrusted as InstallerConnectionError).message).toMatch(/presented a certificate this client does not trust/);
      expect((untrusted as InstallerConnectionError).hint).toMatch(/--installer-ca/);
      const insecure = await InstallerClient.connect({ url: sim.url, user: USER, password: PASSWORD, trust: { insecure: true } });
      expect((await insecure.applianceInfo()).role).toBe('VcfInstaller');
      await insecure.close();
    } finally {
      await sim.close();
    }
  });
});
