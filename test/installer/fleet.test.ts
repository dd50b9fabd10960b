import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTcpServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InstallerClient, InstallerConnectionError } from '../../src/installer/client.js';
import type { InstallerTarget } from '../../src/installer/inventory.js';
import { FleetSession } from '../../src/installer/session.js';
import { selfSignedServerCertificate } from '../../src/cert/index.js';
import { startInstallerSimulator, type InstallerSimulator } from '../../src/simulators/installer/index.js';
import { JsonTransport } from '../../src/net/index.js';
import { countLine, countProgress } from '../../src/util/progress.js';
import { closedPort } from '../helpers/ports.js';

const USER = 'admin@local';
const PASSWORD = 'Fleet-Test-1!';

let tls: { certPem: string; keyPem: string };
beforeAll(async () => {
  tls = await selfSignedServerCertificate('127.0.0.1', '127.0.0.1', 30);
});

function listen(server: Server | ReturnType<typeof createHttpsServer>): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function closeServer(server: Server | ReturnType<typeof createHttpsServer>): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('connections of a fleet', () => {
  it('fails a refused connection at once, after one attempt, whatever the method', async () => {
    const port = await closedPort();
    const url = `https://127.0.0.1:${port}`;
    // Back-off of a millisecond: were a refusal retried, the counts below would say so, not the clock.
    const client = new InstallerClient(new URL(url), { url, user: USER, password: PASSWORD, retries: 3, backoffMs: 1 });
    const err = await client.login().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InstallerConnectionError);
    expect((err as Error).message).toBe(`Cannot reach the installer 127.0.0.1:${port}: the connection was refused (ECONNREFUSED).`);
    expect(client.stats).toMatchObject({ requests: 1, retries: 0 });
    await client.close();

    const transport = new JsonTransport({ origin: new URL(url), timeoutMs: 5_000, retries: 3, backoffMs: 1, connectionError: (e) => e as Error });
    await expect(transport.send('GET', '/v1/system/appliance-info')).rejects.toThrow();
    expect(transport.stats).toEqual({ requests: 1, retries: 0 });
    await transport.close();
  });

  it('still retries a connection reset by the server (the existing policy for idempotent calls), counting what the server accepted', async () => {
    let accepted = 0;
    const server = createTcpServer((socket) => {
      accepted++;
      socket.destroy();
    });
    const port = await listen(server);
    try {
      const transport = new JsonTransport({
        origin: new URL(`https://127.0.0.1:${port}`),
        trust: { caPems: [tls.certPem] },
        timeoutMs: 5_000,
        retries: 2,
        backoffMs: 1,
        connectionError: (e) => e as Error,
      });
      await expect(transport.send('GET', '/')).rejects.toThrow();
      expect(transport.stats).toEqual({ requests: 3, retries: 2 });
      expect(accepted).toBe(3);
      await transport.close();
    } finally {
      await closeServer(server);
    }
  });

  it('names a connection closed before the answer was whole, and one reset during the handshake, each by its own code', async () => {
    const closing = (midAnswer: boolean) =>
      createHttpsServer({ key: tls.keyPem, cert: tls.certPem }, (req, res) => {
        req.resume();
        req.on('end', () => {
          if (!midAnswer) return req.socket.destroy();
          res.writeHead(201, { 'content-type': 'application/json', 'content-length': '100' });
          res.write('{"accessToken":', () => req.socket.destroy());
        });
      });
    for (const midAnswer of [false, true]) {
      const server = closing(midAnswer);
      const port = await listen(server);
      try {
        const url = `https://127.0.0.1:${port}`;
        const client = new InstallerClient(new URL(url), { url, user: USER, password: PASSWORD, trust: { caPems: [tls.certPem] }, retries: 0 });
        const err = await client.login().catch((e: unknown) => e);
        expect((err as InstallerConnectionError).code, `mid-answer: ${midAnswer}`).toBe('NET_CLOSED_EARLY');
        expect((err as Error).message).toBe(
          `Cannot reach the installer 127.0.0.1:${port}: the server closed the connection before its whole answer (NET_CLOSED_EARLY).`,
        );
        await client.close();
      } finally {
        await closeServer(server);
      }
    }
    const resetting = createTcpServer((socket) => socket.destroy());
    const port = await listen(resetting);
    try {
      const url = `https://127.0.0.1:${port}`;
      const client = new InstallerClient(new URL(url), { url, user: USER, password: PASSWORD, trust: { caPems: [tls.certPem] }, retries: 0 });
      const err = await client.login().catch((e: unknown) => e);
      expect((err as Error).message).toBe(`Cannot reach the installer 127.0.0.1:${port}: the connection was reset (ECONNRESET).`);
      await client.close();
    } finally {
      await closeServer(resetting);
    }
  });

  it('times out a server that takes the TCP connection and never starts TLS, as a connection that timed out', async () => {
    const held: Array<{ destroy(): void }> = [];
    const server = createTcpServer((socket) => held.push(socket));
    const port = await listen(server);
    try {
      const url = `https://127.0.0.1:${port}`;
      const client = new InstallerClient(new URL(url), { url, user: USER, password: PASSWORD, trust: { caPems: [tls.certPem] }, timeoutMs: 300, retries: 0 });
      const err = await client.login().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InstallerConnectionError);
      expect((err as InstallerConnectionError).code).toBe('NET_CONNECT_TIMEOUT');
      expect((err as Error).message).toBe(`Cannot reach the installer 127.0.0.1:${port}: the connection timed out (NET_CONNECT_TIMEOUT).`);
      await client.close();
    } finally {
      held.forEach((s) => s.destroy());
      await closeServer(server);
    }
  });

  it('keeps one TLS connection for a whole session: log-in, calls and revocation', async () => {
    let connections = 0;
    const server = createHttpsServer({ key: tls.keyPem, cert: tls.certPem }, (req, res) => {
      req.resume();
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        if (req.url === '/v1/tokens') res.end(JSON.stringify({ accessToken: 'opaque', refreshToken: { id: 'r' } }));
        else if (req.method === 'DELETE') res.writeHead(204).end();
        else if (req.url === '/v1/sddc-manager/trusted-certificates') res.end(JSON.stringify({ elements: [] }));
        else res.end(JSON.stringify({ role: 'VcfInstaller', version: '9.0.1.0' }));
      });
    });
    server.on('secureConnection', () => connections++);
    const port = await listen(server);
    try {
      const url = `https://127.0.0.1:${port}`;
      const client = await InstallerClient.connect({ url, user: USER, password: PASSWORD, trust: { caPems: [tls.certPem] } });
      await client.applianceInfo();
      await client.listTrusted();
      await client.applianceInfo();
      await client.close();
      expect(client.stats.requests).toBe(5);
      expect(connections).toBe(1);
    } finally {
      server.closeAllConnections();
      await closeServer(server);
    }
  });
});

describe('a fleet of reachable and refused consumers', () => {
  let sims: InstallerSimulator[] = [];
  afterAll(async () => {
    await Promise.all(sims.map((s) => s.close()));
  });

  it('reports every consumer in inventory order: the refused ones with their reason, the others with their role; each row once as it ends', async () => {
    sims = await Promise.all([1, 2].map(() => startInstallerSimulator({ users: { [USER]: PASSWORD }, tls })));
    const refused = await Promise.all([1, 2, 3].map(() => closedPort()));
    const target = (name: string, url: string): InstallerTarget => ({ name, url, user: USER, insecure: true });
    const targets = [
      target('gone-0', `https://127.0.0.1:${refused[0]}`),
      target('sim-0', sims[0]!.url),
      target('gone-1', `https://127.0.0.1:${refused[1]}`),
      target('gone-2', `https://127.0.0.1:${refused[2]}`),
      target('sim-1', sims[1]!.url),
    ];
    const session = new FleetSession(targets, { concurrency: 2, timeoutMs: 10_000, prompt: async () => PASSWORD });
    await session.resolvePasswords();
    const seen: string[] = [];
    const rows = await session.run(
      async (client) => ({ ok: true, result: (await client.getDepotSettings()).depotConfiguration ?? null }),
      (row) => seen.push(row.name),
    );
    expect(rows.map((r) => r.name)).toEqual(targets.map((t) => t.name));
    expect(seen.sort()).toEqual(targets.map((t) => t.name).sort());
    for (const row of rows.filter((r) => r.name.startsWith('gone-'))) {
      expect(row).toMatchObject({ ok: false, error: { message: expect.stringContaining('the connection was refused (ECONNREFUSED)') } });
      expect(row.role).toBeUndefined();
    }
    for (const row of rows.filter((r) => r.name.startsWith('sim-'))) expect(row).toMatchObject({ ok: true, role: 'VcfInstaller' });
  });

  it('asks the injected prompt once per user that no file or variable gives, before any work, and refuses such a user without a prompt', async () => {
    const [sim] = (sims = [...sims, await startInstallerSimulator({ users: { [USER]: PASSWORD, other: PASSWORD }, tls })]).slice(-1);
    const dir = await mkdtemp(join(tmpdir(), 'depotkit-fleet-'));
    try {
      const file = join(dir, 'password');
      await writeFile(file, `${PASSWORD}\n`, { mode: 0o600 });
      const targets: InstallerTarget[] = [
        { name: 'a', url: sim!.url, user: USER, insecure: true },
        { name: 'b', url: sim!.url, user: USER, insecure: true },
        { name: 'c', url: sim!.url, user: 'other', insecure: true, passwordFile: file },
      ];
      const asked: string[] = [];
      const session = new FleetSession(targets, { concurrency: 2, timeoutMs: 10_000, prompt: async (question) => (asked.push(question), PASSWORD) });
      expect(await session.resolvePasswords()).toEqual([]);
      expect(asked).toEqual([`Password of ${USER}`]);
      const rows = await session.run(async () => ({ ok: true, result: null }));
      expect(rows.map((r) => r.ok)).toEqual([true, true, true]);
      const unasked = new FleetSession(targets, { concurrency: 2, timeoutMs: 10_000 });
      await expect(unasked.resolvePasswords()).rejects.toThrow(`No password source for ${USER} on a.`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the count line of a fleet', () => {
  it('says done, failed and left, with thousands separated', () => {
    expect(countLine('consumers', { total: 10_000, done: 12, failed: 9_800 })).toBe('consumers: 12 done, 9,800 failed, 188 left (of 10,000)');
    expect(countLine('consumers', { total: 3, done: 0, failed: 0 })).toBe('consumers: 0 done, 0 failed, 3 left (of 3)');
  });

  it('draws on a terminal from the start and ends on the last count, on a line of its own', () => {
    let out = '';
    const tty = { isTTY: true, write: (text: string) => (out += text) };
    const progress = countProgress('consumers', 3, tty);
    expect(out).toBe('\r\x1b[2Kconsumers: 0 done, 0 failed, 3 left (of 3)');
    progress.item(true);
    progress.item(false);
    progress.item(false);
    progress.stop();
    progress.stop();
    expect(out.endsWith('\r\x1b[2Kconsumers: 1 done, 2 failed, 0 left (of 3)\n')).toBe(true);
    expect(out.split('\n')).toHaveLength(2);
  });

  it('writes nothing where the stream is not a terminal', () => {
    let out = '';
    const pipe = { isTTY: false, write: (text: string) => (out += text) };
    const progress = countProgress('consumers', 3, pipe);
    progress.item(true);
    progress.stop();
    expect(out).toBe('');
  });
});
