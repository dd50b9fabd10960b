import { randomBytes, X509Certificate } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS, SERVE_HEALTH_BODIES, SERVE_METRIC_NAMES } from '../../src/constants.js';
import { startDepotServer, type DepotServer } from '../../src/server/index.js';
import { tempDir } from '../helpers/temp.js';
import { basic, fetchRaw, makePki, spawnServe, tlsServeArgs, writeTree, type ServeChild, type TestPki } from './helpers.js';
import { parsePrometheus, sampleValue, type Sample } from './status-helpers.js';
import { until } from '../helpers/poll.js';

// Larger than what loopback socket buffers hold, so that a download a client stops reading stays in flight.
const BIG = randomBytes(32 * 1024 * 1024 + 17);
const BIG_PATH = '/PROD/COMP/VRA/vmsp-vcfa-combined-9.0.0.0.1.tar';
const M = SERVE_METRIC_NAMES;

describe('depotkit serve: /metrics summed over the serving processes, and /healthz while stopping', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let root: string;
  let pki: TestPki;
  const children: ServeChild[] = [];
  const servers: DepotServer[] = [];
  const auth = { Authorization: basic('depot', 'depot-pw') };

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('depotkit-metrics-'));
    root = await writeTree(join(dir, 'web'), { [DEPOT_PATHS.catalog]: '{"patches": {}}\n', [BIG_PATH.slice(1)]: BIG });
    pki = await makePki('metrics CA');
    await writeFile(join(dir, 'cert.pem'), pki.certPem);
    await writeFile(join(dir, 'key.pem'), pki.keyPem, { mode: 0o600 });
    await writeFile(join(dir, 'password'), 'depot-pw\n');
  });
  afterAll(async () => {
    for (const c of children) c.child.kill('SIGKILL');
    // Closing one that is closed already resolves at once.
    for (const s of servers) await s.close();
    await cleanup();
  });

  async function scrape(url: string): Promise<Sample[]> {
    const r = await fetchRaw(url, '/metrics', { ca: pki.caCertPem, headers: auth });
    expect(r.status).toBe(200);
    const { samples, types } = parsePrometheus(r.body.toString('utf8'));
    expect(types.get(M.requests)).toBe('counter');
    expect(types.get(M.fileBytes)).toBe('counter');
    expect(types.get(M.downloadsInFlight)).toBe('gauge');
    return samples;
  }

  /** A TLS handshake that fails: a client that does not trust the certificate (it is checked against another CA). */
  function untrustingClient(port: number, ca: string): Promise<void> {
    return new Promise((resolve) => {
      const s: TLSSocket = tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', ca });
      s.once('secureConnect', () => resolve());
      s.once('error', () => resolve());
    });
  }

  it('counts requests by method and status, a download to the byte, refusals and failed handshakes, in every process', async () => {
    const s = await spawnServe([...tlsServeArgs(root, dir, { auth: true }), '--workers', '2']);
    children.push(s);
    const ca = pki.caCertPem;
    const before = await scrape(s.url);
    // Both serving processes answer every scrape, whichever of them took it.
    expect(sampleValue(before, M.processes)).toBe(2);
    expect(sampleValue(before, M.residentMemory)).toBeGreaterThan(10 * 1024 * 1024);

    const download = await fetchRaw(s.url, BIG_PATH, { ca, headers: auth });
    expect(download.body.equals(BIG)).toBe(true);
    const head = await fetchRaw(s.url, BIG_PATH, { ca, method: 'HEAD', headers: auth });
    expect(head.status).toBe(200);
    expect((await fetchRaw(s.url, BIG_PATH, { ca })).status).toBe(401);
    expect((await fetchRaw(s.url, BIG_PATH, { ca, headers: { Authorization: basic('depot', 'nope') } })).status).toBe(401);
    expect((await fetchRaw(s.url, '/PROD/none', { ca, method: 'DELETE', headers: auth })).status).toBe(405);
    // Plain HTTP to the TLS port, and a client that does not trust the certificate.
    await new Promise<void>((resolve) => {
      const socket = tcpConnect({ host: '127.0.0.1', port: s.port }, () => socket.end('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
      socket.on('close', () => resolve());
      socket.on('error', () => resolve());
      socket.resume();
    });
    await untrustingClient(s.port, (await makePki('another CA')).caCertPem);

    // A handshake's failure reaches the server when its client has already moved on: scrape until both are in.
    // Each scrape is counted once answered, in the next one: `earlier` scrapes are in the last.
    let earlier = 0;
    const after = await until(
      () => (earlier++, scrape(s.url)),
      (text) => sampleValue(text, M.tlsHandshakeFailures) - sampleValue(before, M.tlsHandshakeFailures) >= 2,
      'both handshake failures in the metrics',
      { everyMs: 100 },
    );
    const delta = (name: string, labels: Record<string, string> = {}) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
    expect(delta(M.fileBytes)).toBe(BIG.length);
    // The download and the earlier scrapes.
    expect(delta(M.requests, { method: 'GET', status: '200' })).toBe(1 + earlier);
    expect(delta(M.requests, { method: 'HEAD', status: '200' })).toBe(1);
    expect(delta(M.requests, { method: 'GET', status: '401' })).toBe(2);
    expect(delta(M.requests, { method: 'other', status: '405' })).toBe(1);
    expect(delta(M.authFailures, { reason: 'missing' })).toBe(1);
    expect(delta(M.authFailures, { reason: 'rejected' })).toBe(1);
    expect(delta(M.tlsHandshakeFailures, { reason: 'ERR_SSL_HTTP_REQUEST' })).toBe(1);
    expect(delta(M.tlsHandshakeFailures)).toBe(2);
    expect(sampleValue(after, M.downloadsInFlight)).toBe(0);
    expect(sampleValue(after, M.processes)).toBe(2);
    // Every sample of a counter carries only the labels it declares.
    for (const sample of after.filter((x) => x.name === M.requests)) expect(Object.keys(sample.labels).sort()).toEqual(['method', 'status']);

    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });

  // The library's graceful stop, in this process: how SIGTERM starts it is the built CLI's (cli.test.ts).
  it('shows a running download in flight, and answers /healthz with 503 once a graceful stop has begun', async () => {
    const s = await startDepotServer({
      root,
      host: '127.0.0.1',
      port: 0,
      tls: { certPem: pki.certPem, keyPem: pki.keyPem },
      auth: { user: 'depot', password: 'depot-pw' },
      metricsOpen: true,
    });
    servers.push(s);
    const healthy = await fetchRaw(s.url, '/healthz', { ca: pki.caCertPem });
    expect(healthy.status).toBe(200);
    expect(healthy.body.toString()).toBe(SERVE_HEALTH_BODIES.ok);

    // One connection: a download that this client stops reading after its first bytes (so its response is still
    // being sent), then, once the server is stopping, a request for /healthz pipelined behind it.
    const socket = tlsConnect({ host: '127.0.0.1', port: s.port, servername: 'localhost', ca: pki.caCertPem });
    await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
    const chunks: Buffer[] = [];
    const firstBytes = new Promise<void>((resolve) => socket.once('data', (d: Buffer) => (chunks.push(d), socket.pause(), resolve())));
    socket.write(`GET ${BIG_PATH} HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${auth.Authorization}\r\n\r\n`);
    await firstBytes;
    const during = parsePrometheus((await fetchRaw(s.url, '/metrics', { ca: pki.caCertPem })).body.toString()).samples;
    expect(sampleValue(during, M.downloadsInFlight)).toBe(1);

    const stopped = s.close(60_000);
    socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const ended = new Promise<void>((resolve) => socket.once('end', resolve).once('close', resolve));
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.resume();
    await ended;
    const all = Buffer.concat(chunks);
    // The first response whole (its Content-Length of body), then the probe's.
    const headEnd = all.indexOf('\r\n\r\n');
    const firstHead = all.subarray(0, headEnd).toString('latin1');
    expect(firstHead).toMatch(/^HTTP\/1.1 200 /);
    expect(/\r\ncontent-length: (\d+)/i.exec(firstHead)?.[1]).toBe(String(BIG.length));
    const body = all.subarray(headEnd + 4, headEnd + 4 + BIG.length);
    expect(body.equals(BIG)).toBe(true);
    const second = all.subarray(headEnd + 4 + BIG.length).toString('latin1');
    expect(second).toMatch(/^HTTP\/1.1 503 /);
    expect(second.endsWith(`\r\n\r\n${SERVE_HEALTH_BODIES.stopping}`)).toBe(true);
    await stopped;
  });

  it("exports the served certificate's and its CA's not-after as gauges, the same in every process (not summed), and the new ones after SIGHUP", async () => {
    const own = join(dir, 'gauge');
    await mkdir(own, { recursive: true });
    const [leafA, caA] = pki.certPem.split(/(?<=-----END CERTIFICATE-----\n)/);
    await writeFile(join(own, 'cert.pem'), pki.certPem);
    await writeFile(join(own, 'key.pem'), pki.keyPem, { mode: 0o600 });
    const s = await spawnServe([...tlsServeArgs(root, own), '--workers', '2', '--metrics-open']);
    children.push(s);
    const seconds = (pem: string) => Math.floor(new Date(new X509Certificate(pem).validTo).getTime() / 1000);
    const series = async (ca: string) => {
      const text = (await fetchRaw(s.url, '/metrics', { ca })).body.toString('utf8');
      const { samples, types } = parsePrometheus(text);
      expect(types.get(M.certificateNotAfter)).toBe('gauge');
      expect(sampleValue(samples, M.processes)).toBe(2);
      return samples.filter((x) => x.name === M.certificateNotAfter);
    };
    const expected = (leaf: string, ca: string) => [
      {
        name: M.certificateNotAfter,
        labels: { role: 'server', subject: 'CN=localhost', serial: new X509Certificate(leaf).serialNumber },
        value: seconds(leaf),
      },
      {
        name: M.certificateNotAfter,
        labels: { role: 'ca', subject: new X509Certificate(ca).subject, serial: new X509Certificate(ca).serialNumber },
        value: seconds(ca),
      },
    ];
    // Two processes serve the certificate: its date once, not twice.
    expect(await series(pki.caCertPem)).toEqual(expected(leafA!, caA!));

    const renewed = await makePki('renewed CA');
    const [leafB, caB] = renewed.certPem.split(/(?<=-----END CERTIFICATE-----\n)/);
    await writeFile(join(own, 'cert.pem'), renewed.certPem);
    await writeFile(join(own, 'key.pem'), renewed.keyPem, { mode: 0o600 });
    s.child.kill('SIGHUP');
    await s.waitForStderr(/Reloaded/);
    expect(await series(renewed.caCertPem)).toEqual(expected(leafB!, caB!));
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });
});
