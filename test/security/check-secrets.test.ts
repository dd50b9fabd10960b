// `depotkit check` holds the depot password: it must reach only a server that passed the TLS checks,
// never an untrusted or misnamed one, nor plain HTTP unless asked to.
import { readFile, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { type AddressInfo, connect, createServer as createNetServer, type Server as NetServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { createCa, issueServerCert, type CaMaterial } from '../../src/cert/index.js';
import { checkDepot, type CheckResult } from '../../src/check/check.js';
import { runCli } from '../helpers/cli.js';
import { useTempDir } from '../helpers/temp.js';
import { onTheCommandLine } from '../check/words.js';

const HOST = 'depot.test';
const USER = 'depot';
const PASSWORD = 'never-leaves-home';

/** A depot server that needs Basic auth and records every Authorization header it is sent, on any connection. */
interface Recorder {
  url: string;
  /** Authorization headers received, in order. */
  seen: string[];
  /** Requests received, authorised or not. */
  requests: number;
  server: Server | HttpsServer;
  stop(): Promise<void>;
}

async function recordingServer(root: string, tls?: { certPem: string; keyPem: string }): Promise<Recorder> {
  const expected = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
  const rec = { seen: [] as string[], requests: 0 };
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    rec.requests++;
    if (req.headers.authorization !== undefined) rec.seen.push(req.headers.authorization);
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="depot"', 'Content-Length': '0' }).end();
      return;
    }
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname).slice(1);
    try {
      const data = await readFile(join(root, path));
      res.writeHead(200, { 'Content-Length': data.length });
      res.end(req.method === 'HEAD' ? undefined : data);
    } catch {
      res.writeHead(404, { 'Content-Length': '0' }).end();
    }
  };
  const server = tls ? createHttpsServer({ cert: tls.certPem, key: tls.keyPem }, handler) : createHttpServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return Object.assign(rec, {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    server,
    stop: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  });
}

/**
 * One address for two servers: the first connection that sends a byte (a TLS handshake; the check's bare TCP probe
 * sends none) goes to `first`, every later one to `later`. Chosen per connection, as a server that swaps its
 * certificate cannot be on every Node: a context swapped when the first handshake ends reached one connection later
 * on Node 24.22 than on Node 20.
 */
async function switchingFront(first: Recorder, later: Recorder): Promise<{ url: string; handshakes(): number }> {
  let handshakes = 0;
  const port = (url: string) => Number(new URL(url).port);
  const front = createNetServer((client) => {
    client.once('data', (hello: Buffer) => {
      const upstream = connect(port(handshakes++ === 0 ? first.url : later.url), '127.0.0.1');
      upstream.write(hello);
      client.pipe(upstream).pipe(client);
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.once('error', end).once('close', end);
      upstream.once('error', end).once('close', end);
    });
    client.once('error', () => client.destroy());
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  frontsToClose.push(front);
  return { url: `https://127.0.0.1:${(front.address() as AddressInfo).port}`, handshakes: () => handshakes };
}
const frontsToClose: NetServer[] = [];

const ids = (r: CheckResult) => r.findings.filter((f) => f.severity !== 'info').map((f) => f.id);

describe('check sends the depot password only where it may', () => {
  let root: string;
  const tmp = useTempDir();
  let caA: CaMaterial;
  let caB: CaMaterial;
  let trusted: { certPem: string; keyPem: string };
  const servers: Recorder[] = [];
  const caOf = (name: 'A' | 'B') => () => (name === 'A' ? caA : caB);

  beforeAll(async () => {
    root = join(tmp.dir, 'depot');
    await makeDemoDepot(root, { binarySize: 1024 });
    [caA, caB] = await Promise.all([createCa({ cn: 'trusted CA', keySize: 2048 }), createCa({ cn: 'untrusted CA', keySize: 2048 })]);
    const issued = await issueServerCert(caA, { dns: [HOST], keySize: 2048 });
    trusted = { certPem: issued.chainPem, keyPem: issued.keyPem };
  });
  afterAll(async () => {
    for (const f of frontsToClose) await new Promise((r) => f.close(r));
    for (const s of servers) await s.stop();
  });

  async function serve(tls?: { certPem: string; keyPem: string }): Promise<Recorder> {
    const s = await recordingServer(root, tls);
    servers.push(s);
    return s;
  }

  it('sends it to a server whose certificate chains to --ca and names the host (the control)', async () => {
    const s = await serve(trusted);
    const result = await checkDepot(s.url, { asHost: HOST, caPems: [caA.certPem], user: USER, password: PASSWORD });
    expect(result.accepted).toBe(true);
    expect(s.seen.length).toBeGreaterThan(0);
  });

  it('sends nothing to a server whose certificate does not chain to --ca; the anonymous checks still run', async () => {
    const other = await issueServerCert(caB, { dns: [HOST], keySize: 2048 });
    const s = await serve({ certPem: other.chainPem, keyPem: other.keyPem });
    const result = await checkDepot(s.url, { asHost: HOST, caPems: [caA.certPem], user: USER, password: PASSWORD });
    expect(s.seen).toEqual([]);
    // The server was still asked, without credentials, and its 401 reported.
    expect(s.requests).toBeGreaterThan(0);
    expect(ids(result)).toContain('cert.chain.untrusted');
    expect(ids(result)).toContain('auth.withheld');
    expect(ids(result)).toContain('auth.unchecked');
    expect(ids(result)).not.toContain('auth.rejected');
    expect(result.accepted).toBe(false);
  });

  it('sends nothing without --ca', async () => {
    const s = await serve(trusted);
    const result = await checkDepot(s.url, { asHost: HOST, user: USER, password: PASSWORD });
    expect(s.seen).toEqual([]);
    expect(ids(result)).toEqual(expect.arrayContaining(['tls.ca.not-given', 'auth.withheld']));
  });

  it('sends nothing to a trusted certificate that fails the host-name check', async () => {
    const s = await serve(trusted);
    const result = await checkDepot(s.url, { asHost: 'other.test', caPems: [caA.certPem], user: USER, password: PASSWORD });
    expect(s.seen).toEqual([]);
    expect(ids(result)).toEqual(expect.arrayContaining(['cert.san.host-missing', 'auth.withheld']));
  });

  it.each([
    ['from the untrusted CA', caOf('B'), /self-signed certificate/],
    ['from the trusted CA, for another host', caOf('A'), /another certificate than the one checked/],
  ])('sends nothing when the server presents another certificate (%s) after the one that was checked', async (_what, issuer, why) => {
    // The trusted certificate on the first handshake (the one the check judges), another on every later connection.
    const other = await issueServerCert(issuer(), { dns: ['elsewhere.test'], keySize: 2048 });
    const first = await serve(trusted);
    const later = await serve({ certPem: other.chainPem, keyPem: other.keyPem });
    const front = await switchingFront(first, later);
    const result = await checkDepot(front.url, { asHost: HOST, caPems: [caA.certPem], user: USER, password: PASSWORD });
    expect(front.handshakes()).toBeGreaterThan(1);
    expect([...first.seen, ...later.seen]).toEqual([]);
    expect(result.accepted).toBe(false);
    expect(result.findings.find((f) => f.id === 'catalog.failed')?.message).toMatch(why);
  });

  it('over http:// sends nothing unless --allow-http-credentials, and then says so', async () => {
    const s = await serve();
    const held = await checkDepot(s.url, { user: USER, password: PASSWORD });
    expect(s.seen).toEqual([]);
    expect(ids(held)).toEqual(['http.plain', 'auth.withheld', 'auth.unchecked']);
    const sent = await checkDepot(s.url, { user: USER, password: PASSWORD, allowHttpCredentials: true });
    expect(s.seen.length).toBeGreaterThan(0);
    expect(ids(sent)).toEqual(['http.plain', 'auth.cleartext']);
    expect(onTheCommandLine(sent.findings.find((f) => f.id === 'auth.cleartext')!.message)).toMatch(/--allow-http-credentials/);
  });

  it('CLI: --allow-http-credentials; the password is never printed', async () => {
    const s = await serve();
    const passwordFile = join(tmp.dir, 'password');
    await writeFile(passwordFile, `${PASSWORD}\n`);
    const held = await runCli(['check', s.url, '--user', USER, '--password-file', passwordFile, '--json']);
    expect(s.seen).toEqual([]);
    expect(held.code).toBe(1);
    expect(JSON.parse(held.stdout).findings.map((f: { id: string }) => f.id)).toContain('auth.withheld');
    const sent = await runCli(['check', s.url, '--user', USER, '--password-file', passwordFile, '--allow-http-credentials']);
    expect(s.seen.length).toBeGreaterThan(0);
    expect(sent.stdout).toMatch(/auth\.cleartext/);
    expect(sent.stdout).toContain('ACCEPT');
    for (const r of [held, sent]) expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    expect(s.seen.every((h) => h === `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`)).toBe(true);
  });
});
