import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  InstallerApiError,
  InstallerClient,
  type InstallerClientOptions,
  InstallerConnectionError,
  OPEN_DEPOT_ACCOUNT,
  downloadRelease,
  ensureTrusted,
  installerStatus,
  loadInventory,
  pushDepot,
  syncDepot,
  withoutPassword,
} from '../../src/installer/index.js';
import { issueServerCert } from '../../src/cert/index.js';
import { startDepotServer } from '../../src/server/index.js';
import { readFile, writeFile } from 'node:fs/promises';
import {
  DEPOT_PASSWORD,
  DEPOT_USER,
  PASSWORD,
  USER,
  asCommandLine,
  depotCa,
  expectRequestMatchesSpec,
  startSim,
  startTestDepot,
  withClient,
  type TestDepot,
} from './helpers.js';
import { until } from '../helpers/poll.js';
import { useTestDepot } from '../helpers/installer-sim.js';

let dir: string;
let depot: TestDepot;
useTestDepot('depotkit-installer-client-', (started) => ({ dir, depot } = started));

/** A tiny HTTPS server with scripted answers, for what a well-behaved installer never does. */
async function scripted(
  answer: (n: number, method: string, url: string) => { status: number; body?: unknown; delayMs?: number } | 'hang',
): Promise<{ url: string; caPem: string; count: () => number; close: () => Promise<void> }> {
  const cert = await issueServerCert(await depotCa(), { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  let n = 0;
  const server: Server = createServer({ key: cert.keyPem, cert: cert.certPem }, (req, res) => {
    const reply = answer(++n, req.method ?? '', req.url ?? '');
    req.resume();
    if (reply === 'hang') return;
    setTimeout(() => {
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
    }, reply.delayMs ?? 0);
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
async function recordingProxy(target: {
  url: string;
  caPem: string;
}): Promise<{ url: string; caPem: string; seen: Array<{ method: string; path: string; contentType?: string; body: unknown }>; close: () => Promise<void> }> {
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
      void request(`${target.url}${req.url}`, { method: req.method as 'GET', headers, body: text === '' ? undefined : text, dispatcher: agent }).then(
        async (up) => {
          const body = await up.body.text();
          res.writeHead(up.statusCode, { 'content-type': 'application/json' });
          res.end(body);
        },
      );
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

/** A client logged in as USER to `server` (a simulator or a scripted installer), trusting its certificate. */
function connectAs(server: { url: string; caPem: string }, opts: Partial<InstallerClientOptions> = {}): Promise<InstallerClient> {
  return InstallerClient.connect({ url: server.url, user: USER, password: PASSWORD, trust: { caPems: [server.caPem] }, ...opts });
}

describe('installer client', () => {
  it('refreshes before expiry, refreshes once on a 401, logs in again when the refresh token is gone, revokes on close', async () => {
    let simNow = Date.now();
    let clientNow = simNow;
    const sim = await startSim({ clock: () => simNow });
    try {
      const client = await connectAs(sim, { clock: () => clientNow });
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
      expect((err as InstallerApiError).fix).toBe('Check the user name and password.');

      const client = await connectAs(sim);
      try {
        // A refused depot is a result, read back from the installer: ok false with its status and errorCode.
        const failed = await pushDepot(client, { hostname: depot.host, port: depot.port, username: DEPOT_USER, password: DEPOT_PASSWORD });
        expect(failed).toMatchObject({
          action: 'updated',
          ok: false,
          status: 'UNKNOWN_FAILURE',
          errorCode: 'VMWARE_DEPOT_CONNECT_FAILURE',
          settings: { offlineAccount: { username: DEPOT_USER } },
        });
        expect(failed.message).toContain('Secure protocol communication error');
        // The installer's remediation first, then depotkit's own advice, under the one name of the next step.
        expect(failed.fix).toContain('Please verify the depot credentials for user are correct, check your connection to the depot and try command again.');
        expect(asCommandLine(failed.fix)).toMatch(/import the CA that issued it \(depotkit installer trust --ca CA-CERT\)/);

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

  it('sees a quick sync end without waiting out its longest poll interval (10 minutes here): the first reads come sooner', async () => {
    await withClient(async (client) => {
      await ensureTrusted(client, [depot.ca.certPem]);
      expect((await pushDepot(client, { hostname: depot.host, port: depot.port, username: DEPOT_USER, password: DEPOT_PASSWORD })).ok).toBe(true);
      const synced = await syncDepot(client, { pollMs: 600_000 });
      expect(synced).toMatchObject({ ok: true, status: 'SYNCED' });
      expect(synced.completedAt).toBeDefined();
    });
  });

  it('sends only requests the published spec accepts, JSON with its content type', async () => {
    const sim = await startSim();
    const proxy = await recordingProxy(sim);
    try {
      const client = await connectAs(proxy);
      await client.refresh();
      await ensureTrusted(client, [depot.ca.certPem]);
      await pushDepot(client, { hostname: depot.host, port: depot.port, username: DEPOT_USER, password: DEPOT_PASSWORD });
      await pushDepot(client, { url: `https://localhost:${depot.port}`, username: DEPOT_USER, password: DEPOT_PASSWORD });
      expect((await syncDepot(client, { pollMs: 50 })).ok).toBe(true);
      const manifest = JSON.parse(await readFile(join(dir, 'depot', 'PROD/metadata/manifest/v1/vcfManifest.json'), 'utf8')) as {
        releases: Array<{ version: string }>;
      };
      expect((await downloadRelease(client, { release: manifest.releases[0]!.version, components: ['VCENTER'], pollMs: 50 })).ok).toBe(true);
      await installerStatus(client);
      const alias = (await client.listTrusted()).elements[0]!.alias;
      expect(await client.deleteTrusted(alias)).toBe(true);
      await client.close();
      const operations = new Set(
        proxy.seen.map(
          (r) =>
            `${r.method} ${r.path
              .split('?')[0]!
              .replace(/trusted-certificates\/.+$/, 'trusted-certificates/{alias}')
              .replace(/bundles\/[0-9a-f-]{36}$/, 'bundles/{id}')}`,
        ),
      );
      expect([...operations].sort()).toEqual([
        'DELETE /v1/sddc-manager/trusted-certificates/{alias}',
        'DELETE /v1/tokens/refresh-token',
        'GET /v1/bundles/download-status',
        'GET /v1/releases/VCF/release-components',
        'GET /v1/sddc-manager/trusted-certificates',
        'GET /v1/system/appliance-info',
        'GET /v1/system/settings/depot',
        'GET /v1/system/settings/depot/depot-sync-info',
        'PATCH /v1/bundles/{id}',
        'PATCH /v1/system/settings/depot/depot-sync-info',
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
    const plain = await startDepotServer({ root: join(dir, 'depot'), host: '127.0.0.1', port: 0 });
    try {
      for (const version of ['9.1.0.0.25368698', '9.0.2.0.24000000']) {
        const sim = await startSim({ version });
        const client = await connectAs(sim);
        try {
          const outcome = await pushDepot(client, { url: plain.url }).catch((e: unknown) => e);
          if (version.startsWith('9.1')) {
            expect(outcome).toMatchObject({ action: 'updated', ok: true, settings: { depotConfiguration: { url: plain.url } } });
          } else {
            expect((outcome as Error).message).toBe(
              "The installer's version 9.0.2.0.24000000 takes the depot as a host and port over HTTPS; plain HTTP needs 9.1 or later.",
            );
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
        return importStatus === 409
          ? { status: 409, body: { errorCode: 'TRUSTED_CERTIFICATE_ALREADY_EXISTS', message: 'exists' } }
          : { status: 200, body: { elements: [] } };
      });
      try {
        const client = await connectAs(server);
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
      const client = await connectAs(flaky, { backoffMs: 5 });
      expect(client.stats.retries).toBe(2);
      expect(flaky.count()).toBe(3);
      await client.close();
    } finally {
      await flaky.close();
    }

    const refusing = await scripted(() => ({ status: 400, body: { errorCode: 'BAD_REQUEST', message: 'no', remediationMessage: 'fix it' } }));
    try {
      const err = await connectAs(refusing, { backoffMs: 5 }).catch((e: unknown) => e);
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
    expect((down as Error).message).toMatch(/^Cannot reach the installer 127\.0\.0\.1:\d+: the connection was refused \(ECONNREFUSED\)\.$/);
    // A refusal is final: nothing listens there, and a fleet of stopped consumers must not wait out the back-off.
    expect(client.stats).toMatchObject({ requests: 1, retries: 0 });
  });

  it('times out a silent installer, and verifies its certificate unless told --insecure', async () => {
    const silent = await scripted(() => 'hang');
    try {
      const err = await connectAs(silent, { timeoutMs: 300, retries: 0 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InstallerConnectionError);
      expect((err as Error).message).toMatch(/NET_HEADERS_TIMEOUT/);
    } finally {
      await silent.close();
    }

    const sim = await startSim();
    try {
      const untrusted = await InstallerClient.connect({ url: sim.url, user: USER, password: PASSWORD }).catch((e: unknown) => e);
      expect(untrusted).toBeInstanceOf(InstallerConnectionError);
      expect((untrusted as InstallerConnectionError).message).toMatch(/presented a certificate this client does not trust/);
      expect(asCommandLine((untrusted as InstallerConnectionError).fix)).toMatch(/--installer-ca/);
      const insecure = await InstallerClient.connect({ url: sim.url, user: USER, password: PASSWORD, trust: { insecure: true } });
      expect((await insecure.applianceInfo()).role).toBe('VcfInstaller');
      await insecure.close();
    } finally {
      await sim.close();
    }
  });

  it('sends a placeholder account for an open depot over hostname and port, and never credentials over http', async () => {
    const open = await startTestDepot(join(dir, 'open'), { auth: false });
    const sim = await startSim();
    try {
      const client = await connectAs(sim);
      try {
        await ensureTrusted(client, [open.ca.certPem]);
        const pushed = await pushDepot(client, { hostname: open.host, port: open.port });
        expect(pushed).toMatchObject({
          ok: true,
          status: 'DEPOT_CONNECTION_SUCCESSFUL',
          settings: { offlineAccount: { username: OPEN_DEPOT_ACCOUNT.username } },
        });
        expect((await pushDepot(client, { hostname: open.host, port: open.port })).action).toBe('unchanged');
        const clear = await pushDepot(client, { url: 'http://depot.lab/', username: DEPOT_USER, password: DEPOT_PASSWORD }).catch((e: unknown) => e);
        expect(clear).toMatchObject({ exitCode: 2, message: 'Depot credentials go only over HTTPS; http://depot.lab/ is plain HTTP.' });
      } finally {
        await client.close();
      }
    } finally {
      await sim.close();
      await open.close();
    }
  });

  it('never returns a depot password the installer echoes', async () => {
    expect(withoutPassword({ offlineAccount: { username: 'u', password: 'p', status: 'S' } })).toEqual({ offlineAccount: { username: 'u', status: 'S' } });
    const ca = await depotCa();
    const echoing = await scripted((_n, method, url) => {
      if (url === '/v1/tokens') return { status: 201, body: pair };
      if (url === '/v1/system/appliance-info') return { status: 200, body: { role: 'VcfInstaller', version: '9.1.0.0.1' } };
      if (url === '/v1/sddc-manager/trusted-certificates') return { status: 200, body: { elements: [{ alias: 'a', certificate: ca.certPem }] } };
      if (method === 'GET')
        return {
          status: 200,
          body: {
            offlineAccount: { username: DEPOT_USER, password: DEPOT_PASSWORD, status: 'DEPOT_CONNECTION_SUCCESSFUL' },
            depotConfiguration: { isOfflineDepot: true, hostname: 'localhost', port: 443 },
          },
        };
      return { status: 500 };
    });
    try {
      const client = await connectAs(echoing);
      const status = await installerStatus(client);
      expect(JSON.stringify(status)).not.toContain(DEPOT_PASSWORD);
      const unchanged = await pushDepot(client, { hostname: 'localhost', port: 443, username: DEPOT_USER, password: 'x' });
      expect(unchanged.action).toBe('unchanged');
      expect(JSON.stringify(unchanged)).not.toContain(DEPOT_PASSWORD);
      await client.close();
    } finally {
      await echoing.close();
    }
  });

  it('sends a POST that timed out only once, retries a GET, and waits for a depot update longer than the request timeout', async () => {
    const silent = await scripted(() => 'hang');
    try {
      const client = new InstallerClient(new URL(silent.url), {
        url: silent.url,
        user: USER,
        password: PASSWORD,
        trust: { caPems: [silent.caPem] },
        timeoutMs: 300,
        retries: 3,
        backoffMs: 5,
      });
      expect(await client.login().catch((e: unknown) => e)).toBeInstanceOf(InstallerConnectionError);
      expect(silent.count()).toBe(1);
      await client.close();
    } finally {
      await silent.close();
    }
    const slowGet = await scripted((n, method) =>
      method === 'GET' && n === 2 ? 'hang' : method === 'GET' ? { status: 200, body: { role: 'VcfInstaller', version: '9.1' } } : { status: 201, body: pair },
    );
    try {
      const client = await connectAs(slowGet, { timeoutMs: 300, backoffMs: 5 });
      expect((await client.applianceInfo()).role).toBe('VcfInstaller');
      expect(client.stats.retries).toBe(1);
      await client.close();
    } finally {
      await slowGet.close();
    }
    // The installer validates the depot before it answers the PUT: slower than one request's timeout.
    const validating = await scripted((_n, method) => (method === 'PUT' ? { status: 202, delayMs: 900 } : { status: 201, body: pair }));
    try {
      const client = await connectAs(validating, { timeoutMs: 300, retries: 0 });
      await client.putDepotSettings({
        offlineAccount: { username: 'u', password: 'p' },
        depotConfiguration: { isOfflineDepot: true, hostname: 'h', port: 443 },
      });
      expect(validating.count()).toBe(2);
      await client.close();
    } finally {
      await validating.close();
    }
  });

  it('revokes the session of a log-in still under way when closed with abort', async () => {
    const seen: string[] = [];
    const server = await scripted((_n, method, url) => {
      seen.push(`${method} ${url}`);
      return url === '/v1/tokens' ? { status: 201, body: pair, delayMs: 300 } : { status: 204 };
    });
    try {
      const client = new InstallerClient(new URL(server.url), { url: server.url, user: USER, password: PASSWORD, trust: { caPems: [server.caPem] } });
      const login = client.login();
      await until(() => seen.length > 0, 'the login request', { everyMs: 10 });
      await client.close({ abort: true });
      await login;
      expect(seen).toEqual(['POST /v1/tokens', 'DELETE /v1/tokens/refresh-token']);
    } finally {
      await server.close();
    }
  });

  it('reports an import the installer does not list afterwards as a failure, and refuses a list of several pages', async () => {
    const ca = await depotCa();
    const forgetful = await scripted((_n, method, url) =>
      url === '/v1/tokens' ? { status: 201, body: pair } : method === 'GET' ? { status: 200, body: { elements: [] } } : { status: 200, body: { elements: [] } },
    );
    try {
      const client = await connectAs(forgetful);
      const err = await ensureTrusted(client, [ca.certPem]).catch((e: unknown) => e);
      expect((err as Error).message).toMatch(
        /^The installer answered the import of .* with HTTP 200 but does not list the certificate afterwards: it is not trusted\.$/,
      );
      await client.close();
    } finally {
      await forgetful.close();
    }
    const paged = await scripted((_n, _method, url) =>
      url === '/v1/tokens'
        ? { status: 201, body: pair }
        : { status: 200, body: { elements: [], pageMetadata: { pageNumber: 0, pageSize: 0, totalElements: 3, totalPages: 2 } } },
    );
    try {
      const client = await connectAs(paged);
      expect(((await client.listTrusted().catch((e: unknown) => e)) as Error).message).toMatch(/lists 3 trusted certificates over 2 pages/);
      await client.close();
    } finally {
      await paged.close();
    }
  });

  it('refuses an inventory entry (or defaults) with both installerCa and insecure; an entry overrides the default', async () => {
    const file = join(dir, 'both.yaml');
    await writeFile(file, 'installers:\n  - { url: https://a.lab, installerCa: ca.pem, insecure: true }\n');
    await expect(loadInventory(file)).rejects.toMatchObject({
      exitCode: 2,
      message: `installer 1 of ${file} gives installerCa and insecure: give one, not both.`,
    });
    await writeFile(file, 'defaults: { installerCa: ca.pem, insecure: true }\ninstallers: [https://a.lab]\n');
    await expect(loadInventory(file)).rejects.toMatchObject({ exitCode: 2 });
    await writeFile(file, 'defaults: { installerCa: ca.pem }\ninstallers: [{ url: https://a.lab, insecure: true }, https://b.lab]\n');
    const [a, b] = await loadInventory(file);
    expect(a).toMatchObject({ insecure: true, installerCa: undefined });
    expect(b).toMatchObject({ installerCa: join(dir, 'ca.pem'), insecure: undefined });
  });

  it('reads a JSON inventory as JSON, without the YAML parser (seconds over 10,000 consumers); YAML flow style still reads as YAML', async () => {
    const json = join(dir, 'fleet.json');
    await writeFile(json, JSON.stringify({ consumers: [{ url: 'https://a.lab', role: 'sddc-manager' }, 'https://b.lab'] }));
    const script = `import { loadInventory } from ${JSON.stringify(join(process.cwd(), 'dist/installer/inventory.js'))};
      import { createRequire } from 'node:module';
      const rows = await loadInventory(${JSON.stringify(json)});
      const cache = Object.keys(createRequire(import.meta.url).cache);
      console.log(JSON.stringify({ urls: rows.map((r) => r.url), yaml: cache.some((k) => k.includes('/node_modules/yaml/')) }));`;
    const { execFileSync } = await import('node:child_process');
    const seen = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as { urls: string[]; yaml: boolean };
    expect(seen).toEqual({ urls: ['https://a.lab', 'https://b.lab'], yaml: false });
    const flow = join(dir, 'flow.yaml');
    await writeFile(flow, '{ installers: [https://a.lab, { url: https://b.lab, role: installer }] }\n');
    expect((await loadInventory(flow)).map((r) => r.url)).toEqual(['https://a.lab', 'https://b.lab']);
  });

  it('validates an inventory against its schema: unknown keys in defaults and entries, with the key meant; wrong types; nothing listed', async () => {
    const file = join(dir, 'typos.yaml');
    const refused = async (yaml: string) => {
      await writeFile(file, yaml);
      const err = (await loadInventory(file).catch((e: unknown) => e)) as { exitCode: number; message: string };
      expect(err.exitCode).toBe(2);
      return err.message;
    };
    expect(await refused('defaults: { usr: admin@local }\ninstallers: [https://a.lab]\n')).toBe(
      `"defaults" in ${file} has an unknown key "usr" (did you mean "user"?); known keys: name, url, role, user, passwordEnv, passwordFile, installerCa, insecure.`,
    );
    expect(await refused('installers:\n  - https://a.lab\n  - { url: https://b.lab, installerCA: ca.pem }\n')).toContain(
      `installer 2 of ${file} has an unknown key "installerCA" (did you mean "installerCa"?)`,
    );
    expect(await refused('instalers: [https://a.lab]\n')).toContain('has an unknown key "instalers" (did you mean "installers"?)');
    expect(await refused('installers: [{ url: https://a.lab, insecure: "yes" }]\n')).toBe(`installer 1 of ${file}: "insecure" must be true or false.`);
    expect(await refused('installers: [{ url: https://a.lab, user: "  " }]\n')).toBe(`installer 1 of ${file}: "user" must be a non-empty string.`);
    expect(await refused('installers: [{ name: a }]\n')).toBe(`installer 1 of ${file} has no url.`);
    expect(await refused('installers: []\n')).toBe(`The inventory ${file} lists no installers.`);
    expect(await refused('defaults: { password: hunter2, usr: x }\ninstallers: [https://a.lab]\n')).toMatch(/^the defaults of .* hold a password;/);
  });
});
