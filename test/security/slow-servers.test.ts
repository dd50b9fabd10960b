import { createServer as createHttpsServer, type Server } from 'node:https';
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readServedChain } from '../../src/installer/depot-chain.js';
import { MgmtClient } from '../../src/vcenter/client.js';
import { handshake } from '../../src/vcenter/served.js';
import { selfSignedCertificate, type ServedCertificate } from '../../src/simulators/vcenter/certs.js';
import { JsonTransport } from '../../src/net/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { PASSWORD, startSim, writeFleetInventory } from '../installer/helpers.js';

/** How often the dripping servers send their next byte: far inside any timeout, so that an idle timer never fires. */
const DRIP_MS = 200;

interface Dripping {
  url: string;
  close(): Promise<void>;
}

const listening = (server: Server | ReturnType<typeof createTcpServer>): Promise<number> =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

/** An HTTPS server that answers every request at once with its headers, then a JSON body one byte at a time, without end. */
async function drippingApi(cert: ServedCertificate): Promise<Dripping> {
  const timers = new Set<NodeJS.Timeout>();
  const server = createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"accessToken":"');
    const timer = setInterval(() => res.write('x'), DRIP_MS);
    timers.add(timer);
    res.once('close', () => (clearInterval(timer), timers.delete(timer)));
  });
  const port = await listening(server);
  return {
    url: `https://127.0.0.1:${port}`,
    close: () => new Promise<void>((r) => (timers.forEach(clearInterval), server.closeAllConnections(), server.close(() => r()))),
  };
}

/** A TCP relay in front of `target` that passes what the client sends at once and what the server sends one byte at a time: a TLS handshake dripped. */
async function drippingRelay(targetPort: number): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    const pending: number[] = [];
    upstream.on('data', (data: Buffer) => pending.push(...data));
    const timer = setInterval(() => pending.length > 0 && client.write(Buffer.from([pending.shift()!])), DRIP_MS);
    client.on('data', (data) => upstream.write(data));
    const end = () => (clearInterval(timer), client.destroy(), upstream.destroy());
    client.once('close', end).on('error', end);
    upstream.once('close', end).on('error', end);
  });
  const port = await listening(server);
  return { port, close: () => new Promise<void>((r) => (sockets.forEach((s) => s.destroy()), server.close(() => r()))) };
}

let tmp: { dir: string; cleanup: () => Promise<void> };
let cert: ServedCertificate;

beforeAll(async () => {
  tmp = await tempDir('depotkit-slow-servers-');
  cert = await selfSignedCertificate('127.0.0.1', '127.0.0.1');
});
afterAll(() => tmp?.cleanup());

describe('a server that drips its answer ends each request at its timeout', () => {
  it('the API transport: a GET dripped byte by byte fails with the body timeout, retries included', async () => {
    const dripping = await drippingApi(cert);
    const transport = new JsonTransport({
      origin: new URL(dripping.url),
      trust: { caPems: [cert.certPem] },
      timeoutMs: 1000,
      retries: 1,
      backoffMs: 10,
      connectionError: (_err, code) => new Error(`failed: ${code}`),
    });
    try {
      await expect(transport.send('GET', '/v1/system/appliance-info')).rejects.toThrow('failed: NET_BODY_TIMEOUT');
      expect(transport.stats).toEqual({ requests: 2, retries: 1 });
    } finally {
      transport.destroy();
      await dripping.close();
    }
  });

  it("the management server's log-in dripped: one sentence that says the answer did not come whole in time", async () => {
    const dripping = await drippingApi(cert);
    try {
      await expect(
        MgmtClient.connect({
          server: dripping.url,
          user: 'administrator@vsphere.local',
          password: 'not-sent-far',
          trust: { caPems: [cert.certPem] },
          timeoutMs: 1000,
        }),
      ).rejects.toThrow(`Cannot reach ${new URL(dripping.url).host}: the server did not send its whole answer in time (NET_BODY_TIMEOUT).`);
    } finally {
      await dripping.close();
    }
  });

  // Node's idle timer of a TLS socket sees the records, not the bytes: a handshake dripped byte by byte is given up at its timeout.
  it("a TLS handshake dripped: the depot's chain and the management server's certificate are given up at the timeout", async () => {
    const real = createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, (_req, res) => res.end());
    const relay = await drippingRelay(await listening(real));
    try {
      const origin = new URL(`https://127.0.0.1:${relay.port}`);
      expect(await readServedChain(origin, 1000)).toBeUndefined();
      expect(await handshake(origin, { timeoutMs: 1000 })).toEqual({ ok: false, reason: 'no TLS handshake in time' });
    } finally {
      await relay.close();
      real.closeAllConnections();
      real.close();
    }
  });

  it('installer status --inventory: the good consumers get their rows, the dripping one fails its own with the timeout', async () => {
    const [good1, good2, dripping] = await Promise.all([startSim(), startSim(), drippingApi(cert)]);
    try {
      const inventory = await writeFleetInventory(tmp.dir, [good1.caPem, good2.caPem, cert.certPem], {
        'good-1': good1.url,
        dripping: dripping.url,
        'good-2': good2.url,
      });
      const res = await runCli(['installer', 'status', '--inventory', inventory, '--timeout', '2'], { env: { FLEET_PASSWORD: PASSWORD } });
      expect(res.code, res.stderr).toBe(1);
      expect(res.stdout).toMatch(/^good-1 {2}\S+ \S+ {2}ok {2}/m);
      expect(res.stdout).toMatch(/^good-2 {2}\S+ \S+ {2}ok {2}/m);
      expect(res.stdout).toContain(
        `dripping  FAILED  Cannot reach the installer ${new URL(dripping.url).host}: the server did not send its whole answer in time (NET_BODY_TIMEOUT).`,
      );
      expect(res.stdout).toContain('3 consumers: 2 ok, 1 failed.');
    } finally {
      await Promise.all([good1.close(), good2.close(), dripping.close()]);
    }
  }, 60_000);
});
