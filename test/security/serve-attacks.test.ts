// Attacks on `depotkit serve`: password floods, hostile paths and request targets, malformed
// credentials. Every flood here is bounded in count, and every wait in time.
import { randomBytes } from 'node:crypto';
import { readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { startDepotServer, type AuthOptions, type DepotServer } from '../../src/server/index.js';
import { SERVE_AUTH_FAILURE_BURST, SERVE_AUTH_FAILURE_REFILL_MS } from '../../src/server/tuning.js';
import { failureShare } from '../../src/server/workers.js';
import { tempDir } from '../helpers/temp.js';
import { basic, makePki, spawnServe, tlsServeArgs, writeTree, type ServeChild, type TestPki } from '../server/helpers.js';
import { until } from '../helpers/poll.js';

const CATALOG = `/${DEPOT_PATHS.catalog}`;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One GET on a fresh connection from `localAddress` (any of 127.0.0.0/8 on Linux), the path sent as given; over
 * HTTPS when `ca` is given (the certificate names localhost).
 */
function get(port: number, path: string, options: { authorization?: string; localAddress?: string; ca?: string } = {}): Promise<Answer> {
  const send = options.ca ? httpsRequest : httpRequest;
  const tls = options.ca ? { ca: options.ca, servername: 'localhost' } : {};
  return new Promise((resolve, reject) => {
    const req = send(
      {
        host: '127.0.0.1',
        port,
        path,
        agent: false,
        localAddress: options.localAddress,
        headers: options.authorization ? { Authorization: options.authorization } : {},
        ...tls,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.setTimeout(60_000, () => req.destroy(new Error('no answer within 60 s')));
    req.on('error', reject);
    req.end();
  });
}

/** utime + stime, in clock ticks, of a /proc stat line (fields 14 and 15, counted after the command name). */
async function cpuTicks(statFile: string): Promise<number> {
  const stat = await readFile(statFile, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

describe('serve under a password flood', () => {
  let dir: string;
  let root: string;
  let cleanup: () => Promise<void>;
  let htpasswd: string;
  let pki: TestPki;
  const servers: DepotServer[] = [];
  const children: ServeChild[] = [];

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir());
    root = await writeTree(join(dir, 'web'), { [DEPOT_PATHS.catalog]: '{"patches": {}}\n' });
    htpasswd = join(dir, 'htpasswd');
    // Cost 10, as `htpasswd -B -C 10` makes: a sixteenth of a second of CPU per check in bcryptjs, so that a flood
    // of checks is still under way while a logged-in user is served, and outweighs the serving thread's TLS work
    // (a twelfth of the flood's CPU, measured).
    await writeFile(htpasswd, `depot:${bcrypt.hashSync('right', 10)}\n`);
    pki = await makePki();
    await writeFile(join(dir, 'cert.pem'), pki.certPem);
    await writeFile(join(dir, 'key.pem'), pki.keyPem, { mode: 0o600 });
  });
  /** A server over plain HTTP on 127.0.0.1 that allows `failures` wrong passwords in a row per client address. */
  async function serveLimited(auth: AuthOptions, failures: number): Promise<DepotServer> {
    const s = await startDepotServer({ root, host: '127.0.0.1', port: 0, allowPlainHttpAuth: true, auth, authLimits: { failures, refillMs: 60_000 } });
    servers.push(s);
    return s;
  }

  afterAll(async () => {
    for (const s of servers) await s.close();
    for (const c of children) c.child.kill('SIGKILL');
    await cleanup?.();
  });

  it('answers 429 with Retry-After to a client address after N wrong passwords, whatever it sends next; other clients are served', async () => {
    const low = join(dir, 'low.htpasswd');
    await writeFile(low, `depot:${bcrypt.hashSync('right', 4)}\n`);
    const s = await serveLimited({ htpasswdFile: low }, 3);
    const attacker = '127.0.0.2';
    for (let i = 0; i < 3; i++) expect((await get(s.port, CATALOG, { authorization: basic('depot', `guess-${i}`), localAddress: attacker })).status).toBe(401);
    const limited = await get(s.port, CATALOG, { authorization: basic('depot', 'guess-3'), localAddress: attacker });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    // The right password from that address waits too: answered while limited, it would be a free guessing oracle.
    expect((await get(s.port, CATALOG, { authorization: basic('depot', 'right'), localAddress: attacker })).status).toBe(429);
    // Asking without credentials costs nothing and is answered as ever.
    expect((await get(s.port, CATALOG, { localAddress: attacker })).status).toBe(401);
    // Another address is not affected, and neither is the user who logs in from it.
    expect((await get(s.port, CATALOG, { authorization: basic('depot', 'right'), localAddress: '127.0.0.1' })).status).toBe(200);
    expect((await get(s.port, CATALOG, { authorization: basic('depot', 'wrong'), localAddress: '127.0.0.3' })).status).toBe(401);
    // The single-user mode counts failures alike.
    const single = await serveLimited({ user: 'depot', password: 'right' }, 2);
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await get(single.port, CATALOG, { authorization: basic('depot', `guess-${i}`), localAddress: attacker })).status);
    expect(statuses).toEqual([401, 401, 429]);
  });

  it("a client's parallel requests with the right password, before its first answer, cost one check and no refusal", async () => {
    const s = await serveLimited({ htpasswdFile: htpasswd }, 3);
    // Twelve connections at once (as a checker or a mirror opens them), more than the three failures allowed in a
    // row: none is a failure, so none may be refused.
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => get(s.port, CATALOG, { authorization: basic('depot', 'right'), localAddress: '127.0.0.12' })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array<number>(12).fill(200));
    // Different wrong passwords at once are each a guess: three are answered, the rest wait.
    const wrong = await Promise.all(
      Array.from({ length: 6 }, (_, i) => get(s.port, CATALOG, { authorization: basic('depot', `wrong-${i}`), localAddress: '127.0.0.13' })),
    );
    expect(wrong.filter((a) => a.status === 401).length).toBe(3);
    expect(wrong.filter((a) => a.status === 429).length).toBe(3);
  });

  it('with several serving processes, a client address gets no more failures than from one: the budget is shared', async () => {
    expect(failureShare(undefined, 1)).toEqual({ failures: SERVE_AUTH_FAILURE_BURST, refillMs: SERVE_AUTH_FAILURE_REFILL_MS });
    expect(failureShare({ failures: 10, refillMs: 6_000 }, 2)).toEqual({ failures: 5, refillMs: 12_000 });
    expect(failureShare({ failures: 3, refillMs: 1_000 }, 8)).toEqual({ failures: 1, refillMs: 8_000 });
    await writeFile(join(dir, 'password'), 'right\n', { mode: 0o600 });
    const serve = await spawnServe([...tlsServeArgs(root, dir, { auth: true }), '--workers', '2']);
    children.push(serve);
    // Each attempt on a new connection, which the kernel gives to either process: together they allow the
    // burst of one (10), however the attempts were spread.
    const statuses: number[] = [];
    for (let i = 0; i < SERVE_AUTH_FAILURE_BURST + 4; i++)
      statuses.push((await get(serve.port, CATALOG, { authorization: basic('depot', `guess-${i}`), localAddress: '127.0.0.9', ca: pki.caCertPem })).status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(SERVE_AUTH_FAILURE_BURST);
    expect(statuses.filter((s) => s !== 401).every((s) => s === 429)).toBe(true);
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
  });

  it('computes bcrypt off the serving thread, bounds the checks in progress (503), and keeps serving a logged-in user', async () => {
    const serve = await spawnServe([...tlsServeArgs(root, dir), '--htpasswd', htpasswd, '--workers', '1']);
    children.push(serve);
    const pid = serve.child.pid!;
    const ca = pki.caCertPem;
    // Log in once: the check is remembered.
    expect((await get(serve.port, CATALOG, { authorization: basic('depot', 'right'), ca })).status).toBe(200);
    const mainBefore = await cpuTicks(`/proc/${pid}/task/${pid}/stat`);
    const allBefore = await cpuTicks(`/proc/${pid}/stat`);
    // 40 wrong passwords at once, two from each of 20 addresses (within the per-address limit).
    let answered = 0;
    const flood = Array.from({ length: 40 }, (_, i) =>
      get(serve.port, CATALOG, { authorization: basic('depot', `wrong-${i}`), localAddress: `127.0.0.${2 + (i % 20)}`, ca }).then((a) => {
        answered++;
        return a;
      }),
    );
    // Meanwhile the logged-in user is served, before the flood has been answered.
    for (let i = 0; i < 5; i++) expect((await get(serve.port, CATALOG, { authorization: basic('depot', 'right'), ca })).status).toBe(200);
    expect(answered).toBeLessThan(40);
    const answers = await Promise.all(flood);
    const mainAfter = await cpuTicks(`/proc/${pid}/task/${pid}/stat`);
    const allAfter = await cpuTicks(`/proc/${pid}/stat`);
    const counts = new Map<number, number>();
    for (const a of answers) counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual([401, 503]);
    expect(answers.filter((a) => a.status === 503).every((a) => Number(a.headers['retry-after']) >= 1)).toBe(true);
    // The checks that ran cost CPU, and it was spent by other threads than the one that serves.
    const mainShare = (mainAfter - mainBefore) / (allAfter - allBefore);
    expect(allAfter - allBefore).toBeGreaterThan(0);
    expect(mainShare, `main thread ${mainAfter - mainBefore} of ${allAfter - allBefore} ticks`).toBeLessThan(0.25);
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
  });
});

/** How many descriptors of process `pid` have `file` open (Linux /proc). */
async function descriptorsOf(pid: number, file: string): Promise<number> {
  let n = 0;
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [])) {
    if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) === file) n++;
  }
  return n;
}

describe('serve and clients that stop reading', () => {
  const BIG = randomBytes(48 * 1024 * 1024);
  const BIG_PATH = 'PROD/COMP/VCENTER/VMware-VCSA-all-9.0.0.0.1.iso';
  let dir: string;
  let root: string;
  let cleanup: () => Promise<void>;
  let pki: TestPki;
  const children: ServeChild[] = [];
  const servers: DepotServer[] = [];

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir());
    root = await writeTree(join(dir, 'web'), { [BIG_PATH]: BIG, [DEPOT_PATHS.catalog]: '{"patches": {}}\n' });
    pki = await makePki();
    await writeFile(join(dir, 'cert.pem'), pki.certPem);
    await writeFile(join(dir, 'key.pem'), pki.keyPem, { mode: 0o600 });
  });
  afterAll(async () => {
    for (const c of children) c.child.kill('SIGKILL');
    for (const s of servers) await s.close();
    await cleanup?.();
  });

  it('--send-timeout cuts a download that makes no progress and releases its descriptor; the stalled client sees the close', async () => {
    const serve = await spawnServe([
      root,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--cert',
      join(dir, 'cert.pem'),
      '--key',
      join(dir, 'key.pem'),
      '--workers',
      '1',
      '--send-timeout',
      '1',
    ]);
    children.push(serve);
    const pid = serve.child.pid!;
    const file = join(root, BIG_PATH);
    // Asks for the file, takes the first bytes, then stops reading with the connection open.
    const socket = tlsConnect({ host: '127.0.0.1', port: serve.port, servername: 'localhost', ca: pki.caCertPem }, () =>
      socket.write(`GET /${BIG_PATH} HTTP/1.1\r\nHost: localhost\r\n\r\n`),
    );
    let received = 0;
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => {});
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.pause();
    socket.on('data', (d: Buffer) => (received += d.length));
    await until(
      () => descriptorsOf(pid, file),
      (n) => n > 0,
      'serve to hold the file open',
      { everyMs: 50 },
    );
    // Cut after a second without progress: the descriptor is released and the connection closed.
    await until(
      () => descriptorsOf(pid, file),
      (n) => n === 0,
      'serve to close the file',
      { timeoutMs: 20_000, everyMs: 50 },
    );
    // Reading again, the client gets what was in flight, then the end of a connection cut short.
    socket.resume();
    await closed;
    expect(received).toBeLessThan(BIG.length);
    // The server still serves everyone else.
    expect((await get(serve.port, CATALOG, { ca: pki.caCertPem })).status).toBe(200);
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
  });

  it('does not cut a download that pauses for less than the timeout, however long it takes in all', async () => {
    const s = await startDepotServer({ root, host: '127.0.0.1', port: 0, sendTimeoutMs: 3000 });
    servers.push(s);
    const body = await new Promise<Buffer>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: s.port, path: `/${BIG_PATH}`, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        let pauses = 0;
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          // Four pauses of half a second each (two seconds stalled in all, never three in a row).
          if (pauses < 4 && chunks.length % 50 === 0) {
            pauses++;
            res.pause();
            setTimeout(() => res.resume(), 500);
          }
        });
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
    expect(body.equals(BIG)).toBe(true);
  });
});

/** Sends `head` (request line and headers, without the blank line) with Connection: close on a raw TCP connection; the status and the whole answer. */
function raw(port: number, head: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host: '127.0.0.1', port }, () => socket.write(`${head}\r\nConnection: close\r\n\r\n`));
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text });
    });
  });
}

describe('serve: hostile paths, request targets and credentials', () => {
  const MANIFEST = `/${DEPOT_PATHS.manifest}`;
  const SECRET = 'outside-the-web-root';
  const AUTH = `Authorization: ${basic('depot', 'pw')}`;
  let cleanup: () => Promise<void>;
  let server: DepotServer;
  let host: string;

  beforeAll(async () => {
    const t = await tempDir();
    cleanup = t.cleanup;
    await writeFile(join(t.dir, 'secret.txt'), SECRET);
    const root = await writeTree(join(t.dir, 'web'), {
      [DEPOT_PATHS.manifest]: '{"releases": []}\n',
      'umds-patch-store/index.xml': '<index/>\n',
      'PROD/.hidden': SECRET,
    });
    server = await startDepotServer({
      root,
      host: '127.0.0.1',
      port: 0,
      allowPlainHttpAuth: true,
      auth: { user: 'depot', password: 'pw' },
      openPrefixes: ['umds-patch-store'],
    });
    host = `Host: 127.0.0.1:${server.port}`;
  });
  afterAll(async () => {
    await server?.close();
    await cleanup?.();
  });

  it('does not serve a file as a folder: a trailing slash is 404 (after auth, as any protected path)', async () => {
    for (const method of ['GET', 'HEAD']) {
      expect((await raw(server.port, `${method} ${MANIFEST} HTTP/1.1\r\n${host}\r\n${AUTH}`)).status, method).toBe(200);
      expect((await raw(server.port, `${method} ${MANIFEST}/ HTTP/1.1\r\n${host}\r\n${AUTH}`)).status, method).toBe(404);
      expect((await raw(server.port, `${method} ${MANIFEST}// HTTP/1.1\r\n${host}\r\n${AUTH}`)).status, method).toBe(404);
      expect((await raw(server.port, `${method} ${MANIFEST}/?x=1 HTTP/1.1\r\n${host}\r\n${AUTH}`)).status, method).toBe(404);
      expect((await raw(server.port, `${method} ${MANIFEST}/ HTTP/1.1\r\n${host}`)).status, method).toBe(401);
      expect((await raw(server.port, `${method} /umds-patch-store/index.xml/ HTTP/1.1\r\n${host}`)).status, method).toBe(404);
    }
  });

  it('serves an absolute-form request target as its path (RFC 9112: the host in it is used, Host ignored), auth included', async () => {
    const target = `http://depot.example${MANIFEST}`;
    const served = await raw(server.port, `GET ${target} HTTP/1.1\r\n${host}\r\n${AUTH}`);
    expect(served.status).toBe(200);
    expect(served.text).toContain('"releases"');
    expect((await raw(server.port, `GET ${target} HTTP/1.1\r\n${host}`)).status).toBe(401);
    expect((await raw(server.port, `HEAD HTTPS://Depot.Example:8443${MANIFEST}?v=1 HTTP/1.1\r\nHost: other.example\r\n${AUTH}`)).status).toBe(200);
    expect((await raw(server.port, `GET http://depot.example/umds-patch-store/index.xml HTTP/1.1\r\n${host}`)).status).toBe(200);
    // No path is the root: the status page, behind auth like the depot.
    expect((await raw(server.port, `GET http://depot.example HTTP/1.1\r\n${host}\r\n${AUTH}`)).status).toBe(200);
    expect((await raw(server.port, `GET http://depot.example HTTP/1.1\r\n${host}`)).status).toBe(401);
    expect((await raw(server.port, `GET http://depot.example${MANIFEST}/ HTTP/1.1\r\n${host}\r\n${AUTH}`)).status).toBe(404);
    // Traversal inside the absolute form is refused like in the path form, never normalised away.
    for (const path of ['/PROD/../../secret.txt', '/%2e%2e/secret.txt', '/PROD/%2E%2E/%2e%2e/secret.txt']) {
      const r = await raw(server.port, `GET http://depot.example${path} HTTP/1.1\r\n${host}\r\n${AUTH}`);
      expect(r.status, path).toBe(400);
      expect(r.text).not.toContain(SECRET);
    }
    // Other schemes and forms are not a path.
    for (const target2 of ['ftp://depot.example/PROD/x', 'depot.example:443', '*']) {
      expect((await raw(server.port, `GET ${target2} HTTP/1.1\r\n${host}\r\n${AUTH}`)).status, target2).toBe(400);
    }
  });

  it('refuses every traversal form with 400 or 404, and never answers with what lies outside the root or is hidden', async () => {
    const forms = [
      '/../secret.txt',
      '/PROD/../../secret.txt',
      '/%2e%2e/secret.txt',
      '/%2E%2E%2Fsecret.txt',
      '/PROD/..%2f..%2fsecret.txt',
      '/PROD/%2e%2e%5c%2e%2e%5csecret.txt',
      '/PROD\\..\\..\\secret.txt',
      '/PROD/%00/../secret.txt',
      '/PROD/%c0%ae%c0%ae/secret.txt',
      '/%252e%252e/secret.txt',
      '/PROD/.hidden',
      '/PROD/%2ehidden',
      '/./PROD/metadata/manifest/v1/vcfManifest.json',
      '/PROD/%',
      '/PROD/%zz',
    ];
    for (const path of forms) {
      for (const auth of [AUTH, '']) {
        const r = await raw(server.port, `GET ${path} HTTP/1.1\r\n${host}${auth ? `\r\n${auth}` : ''}`);
        expect([400, 401, 404], `${path} ${auth ? 'with' : 'without'} credentials`).toContain(r.status);
        expect(r.text).not.toContain(SECRET);
      }
    }
  });

  it('answers malformed credentials with 401, never 500, and keeps serving', async () => {
    const headers = [
      'Authorization: Basic',
      'Authorization: Basic ',
      'Authorization: Basic ====',
      'Authorization: Basic !!!!',
      `Authorization: Basic ${Buffer.from('no-colon').toString('base64')}`,
      `Authorization: Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0x00]).toString('base64')}`,
      `Authorization: Basic ${Buffer.from(':').toString('base64')}`,
      `Authorization: Basic ${'A'.repeat(8000)}`,
      'Authorization: Bearer abc',
      'Authorization: Digest username="depot"',
      `Authorization: ${basic('depot', 'pw')}, ${basic('depot', 'pw')}`,
      `Authorization: ${basic('depot', 'pw').replace('Basic', 'Basic\t\t')}x`,
      `Authorization: ${basic('depot', 'pw')}=x`,
      `Authorization: ${basic('depot', 'pw')}\r\nAuthorization: ${basic('depot', 'wrong')}`,
      `Authorization: ${basic('depot', 'wrong')}\r\nAuthorization: ${basic('depot', 'pw')}`,
    ];
    for (const header of headers) {
      const r = await raw(server.port, `GET ${MANIFEST} HTTP/1.1\r\n${host}\r\n${header}`);
      expect([400, 401], header.slice(0, 60)).toContain(r.status);
    }
    // A header beyond Node's 16 KiB limit is refused before the handler.
    expect((await raw(server.port, `GET ${MANIFEST} HTTP/1.1\r\n${host}\r\nAuthorization: Basic ${'A'.repeat(20_000)}`)).status).toBe(431);
    expect((await raw(server.port, `GET ${MANIFEST} HTTP/1.1\r\n${host}\r\n${AUTH}`)).status).toBe(200);
  });
});
