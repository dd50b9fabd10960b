// How many connections a check opens: few for a small depot on a near server (a handshake costs more there than
// a few requests in a row), every one the concurrency allows for a sweep long enough to need them. Counted by a
// real server, per connection.
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { createCa, issueServerCert, type CaMaterial } from '../../src/cert/index.js';
import { checkDepot } from '../../src/check/check.js';
import { RequestTiming, connectionsWorth } from '../../src/check/pool.js';
import { tempDir } from '../helpers/temp.js';
import { sha256 } from '../depot/helpers.js';

const USER = 'depot';
const PASSWORD = 'counted connections';
const AUTH = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

interface Counts {
  /** TCP connections accepted. */
  connections: number;
  /** TLS handshakes completed, and how many of them resumed a session. */
  handshakes: number;
  resumed: number;
  /** Connections that carried the credentials. */
  withCredentials: Set<Socket>;
}

/** A depot server over TLS that needs Basic auth and counts what each connection does. */
async function countingServer(root: string, tls: { certPem: string; keyPem: string }): Promise<{ url: string; counts: Counts; server: Server }> {
  const counts: Counts = { connections: 0, handshakes: 0, resumed: 0, withCredentials: new Set() };
  const server = createServer({ cert: tls.certPem, key: tls.keyPem }, async (req, res) => {
    if (req.headers.authorization !== AUTH) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="depot"', 'Content-Length': '0' }).end();
      return;
    }
    counts.withCredentials.add(req.socket);
    try {
      const data = await readFile(join(root, decodeURIComponent(new URL(req.url ?? '/', 'https://x').pathname)));
      res.writeHead(200, { 'Content-Length': data.length }).end(req.method === 'HEAD' ? undefined : data);
    } catch {
      res.writeHead(404, { 'Content-Length': '0' }).end();
    }
  });
  server.on('connection', () => counts.connections++);
  server.on('secureConnection', (socket: TLSSocket) => {
    counts.handshakes++;
    if (socket.isSessionReused()) counts.resumed++;
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/`, counts, server };
}

/** A depot whose catalog names `count` binaries of 16 bytes. */
async function manyBinaries(dir: string, count: number): Promise<void> {
  await makeDemoDepot(dir, { binarySize: 0 });
  const binaries = [];
  for (let i = 0; i < count; i++) {
    const data = randomBytes(16);
    await writeFile(join(dir, 'PROD/COMP/VCENTER', `many-${i}.bin`), data);
    binaries.push({ fileName: `many-${i}.bin`, size: data.length, checksum: sha256(data) });
  }
  const bundle = { name: 'many', type: 'INSTALL', binaries };
  await writeFile(
    join(dir, DEPOT_PATHS.catalog),
    JSON.stringify({ patches: { VCENTER: [{ productVersion: '9.0.0.0.1', artifacts: { bundles: [bundle] } }] } }),
  );
}

describe('the connections a check opens', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let ca: CaMaterial;
  let tls: { certPem: string; keyPem: string };
  const servers: Server[] = [];

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir());
    ca = await createCa({ keySize: 2048 });
    const issued = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
    tls = { certPem: issued.chainPem, keyPem: issued.keyPem };
    await makeDemoDepot(join(dir, 'demo'), { binarySize: 1024 });
    await manyBinaries(join(dir, 'many'), 200);
  });
  afterAll(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
    await cleanup?.();
  });

  async function check(depot: string, concurrency?: number): Promise<Counts> {
    const { url, counts, server } = await countingServer(join(dir, depot), tls);
    servers.push(server);
    const result = await checkDepot(url, { caPems: [ca.certPem], user: USER, password: PASSWORD, concurrency });
    expect(result.accepted).toBe(true);
    return counts;
  }

  it('a 16-binary depot on a near server: a few connections, not one per binary in flight', async () => {
    const counts = await check('demo');
    // At least two HEADs go on each connection with credentials (16 of them before: one per binary in flight).
    expect(counts.withCredentials.size).toBeGreaterThanOrEqual(1);
    expect(counts.withCredentials.size).toBeLessThanOrEqual(8);
    // The TLS stage's handshake and the connection for requests without credentials besides (Node 24's agent
    // finds no anonymous request left for a connection of its own here: one fewer).
    expect(counts.handshakes).toBeGreaterThanOrEqual(counts.withCredentials.size + 1);
    expect(counts.handshakes).toBeLessThanOrEqual(counts.withCredentials.size + 2);
    // The TCP connection that tells the server is there carries the TLS stage's handshake (on Node 20; Node 24
    // closes it and the handshake opens its own: one connection more, never one per binary).
    expect(counts.connections).toBeGreaterThanOrEqual(counts.handshakes);
    expect(counts.connections).toBeLessThanOrEqual(counts.handshakes + 1);
  });

  it('a 200-binary depot: every connection the concurrency allows, and no more; the later ones resume the first', async () => {
    const wide = await check('many');
    expect(wide.withCredentials.size).toBe(16);
    expect(wide.resumed).toBeGreaterThanOrEqual(15);
    const narrow = await check('many', 4);
    expect(narrow.withCredentials.size).toBe(4);
  });
});

describe('connectionsWorth', () => {
  const timed = (first: number, fastest: number) => Object.assign(new RequestTiming(), { first, fastest });

  it('with nothing timed yet, eight requests a connection', () => {
    expect(connectionsWorth(16, new RequestTiming())).toBe(2);
    expect(connectionsWorth(1, new RequestTiming())).toBe(1);
  });

  it('a near server, where the first request took twenty times the fastest: eight a connection at most', () => {
    expect(connectionsWorth(16, timed(10, 0.5))).toBe(2);
    expect(connectionsWorth(200, timed(10, 0.5))).toBe(25);
  });

  it('a far server, where the handshake took two round trips: two a connection', () => {
    expect(connectionsWorth(16, timed(60, 20))).toBe(8);
    // Never fewer than two: a handshake takes two round trips at least, even when the first request was quick.
    expect(connectionsWorth(16, timed(21, 20))).toBe(8);
  });

  it('records the first request and the fastest', () => {
    const timing = new RequestTiming();
    for (const ms of [9, 2, 5]) timing.record(ms);
    expect(timing).toMatchObject({ first: 9, fastest: 2 });
  });
});
