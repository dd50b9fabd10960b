import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS, UMDS_PATCH_STORE_DIR } from '../../src/constants.js';
import { createCa, writeCaDir } from '../../src/cert/index.js';
import { Command } from 'commander';
import { registerServeCommands } from '../../src/cli/serve.js';
import { startDepotServer } from '../../src/server/index.js';
import { openPrefixesOf } from '../../src/server/root.js';
import { DepotkitError, EXIT } from '../../src/util/errors.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import {
  basic,
  childPids,
  fetchRaw,
  makePki,
  openAnswered,
  peerCertificate,
  pidsServing,
  spawnServe,
  tlsServeArgs,
  writeTree,
  type ServeChild,
  type TestPki,
} from './helpers.js';
import { until } from '../helpers/poll.js';

const BIG = randomBytes(32 * 1024 * 1024);
const BIG_PATH = '/PROD/COMP/VRA/vmsp-vcfa-combined-9.0.0.0.1.tar';
const OPEN_FILE = `/${UMDS_PATCH_STORE_DIR}/hostupdate/index.xml`;

/** HTTP status of `curl` (a real, independent client) on `url`, HEAD with `-I`, with or without credentials. */
function curlStatus(url: string, ca: string, options: { head?: boolean; user?: string } = {}): string {
  const args = [
    '-sS',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code}',
    '--cacert',
    ca,
    ...(options.head ? ['-I'] : []),
    ...(options.user ? ['-u', options.user] : []),
    url,
  ];
  return execFileSync('curl', args, { encoding: 'utf8' });
}

/** Opens `n` TLS connections at once, sends an anonymous GET of `path` on each, and resolves once each has answered with its status line. */
function openTlsAnswered(port: number, ca: string, path: string, n: number): Promise<{ socket: TLSSocket; statusLine: string }[]> {
  return Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<{ socket: TLSSocket; statusLine: string }>((resolve, reject) => {
          const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', ca }, () =>
            socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`),
          );
          socket.once('data', (d: Buffer) => resolve({ socket, statusLine: d.toString('latin1').split('\r\n')[0]! }));
          socket.once('error', reject);
        }),
    ),
  );
}

describe('depotkit serve (the built CLI)', () => {
  let dir: string;
  let root: string;
  let cleanup: () => Promise<void>;
  let pkiA: TestPki;
  let pkiB: TestPki;
  const children: ServeChild[] = [];

  beforeAll(async () => {
    const t = await tempDir();
    dir = t.dir;
    cleanup = t.cleanup;
    root = await writeTree(join(dir, 'web'), {
      [DEPOT_PATHS.catalog]: '{"patches": {}}\n',
      [BIG_PATH.slice(1)]: BIG,
      [OPEN_FILE.slice(1)]: '<index/>\n',
      [DEPOT_PATHS.hclAll]: '{}\n',
    });
    [pkiA, pkiB] = await Promise.all([makePki('CA A'), makePki('CA B')]);
    await writeFile(join(dir, 'password'), 'depot-pw\n');
  });
  afterAll(async () => {
    for (const c of children) c.child.kill('SIGKILL');
    await cleanup?.();
  });

  /** A download that pauses after its first chunk, runs `meanwhile`, then reads the rest. */
  function downloadAcross(url: string, options: { ca: string; headers?: Record<string, string> }, meanwhile: () => Promise<void>): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      const req = request(url, { ...options, servername: 'localhost', agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.once('data', (c: Buffer) => {
          chunks.push(c);
          res.pause();
          meanwhile().then(() => {
            res.on('data', (d: Buffer) => chunks.push(d));
            res.resume();
          }, reject);
        });
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  }

  async function writeCert(p: TestPki): Promise<void> {
    await writeFile(join(dir, 'cert.pem'), p.certPem);
    await writeFile(join(dir, 'key.pem'), p.keyPem, { mode: 0o600 });
  }

  it('reloads the certificate on SIGHUP in every worker without dropping a running download', async () => {
    await writeCert(pkiA);
    const serve = await spawnServe([...tlsServeArgs(root, dir, { auth: true }), '--workers', '2']);
    children.push(serve);
    const before = await peerCertificate(serve.port, pkiA.caCertPem);
    expect(before.issuer).toContain('CA A');
    // A download that started before the rotation, read slowly across it.
    const download = downloadAcross(`${serve.url}${BIG_PATH}`, { ca: pkiA.caCertPem, headers: { Authorization: basic('depot', 'depot-pw') } }, rotate);
    async function rotate(): Promise<void> {
      await writeCert(pkiB);
      serve.child.kill('SIGHUP');
      await serve.waitForStderr(/Reloaded/);
    }
    const body = await download;
    expect(body.equals(BIG)).toBe(true);
    // Several new connections, so both workers are asked: each now presents the new certificate.
    for (let i = 0; i < 4; i++) {
      const after = await peerCertificate(serve.port, pkiB.caCertPem);
      expect(after.issuer).toContain('CA B');
    }
    const r = await fetchRaw(serve.url, `/${DEPOT_PATHS.catalog}`, { ca: pkiB.caCertPem, headers: { Authorization: basic('depot', 'depot-pw') } });
    expect(r.status).toBe(200);
    // A broken file on the next SIGHUP keeps the working certificate.
    await writeFile(join(dir, 'cert.pem'), 'not a certificate');
    serve.child.kill('SIGHUP');
    await serve.waitForStderr(/reload failed/);
    expect((await peerCertificate(serve.port, pkiB.caCertPem)).issuer).toContain('CA B');
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
  });

  it('stops gracefully on SIGTERM: refuses new connections, lets a running download finish', async () => {
    await writeCert(pkiA);
    const serve = await spawnServe([...tlsServeArgs(root, dir), '--workers', '2', '--grace', '60']);
    children.push(serve);
    const download = downloadAcross(`${serve.url}${BIG_PATH}`, { ca: pkiA.caCertPem }, async () => {
      serve.child.kill('SIGTERM');
      await serve.waitForStderr(/Stopping/);
      // Wait until the workers have closed their listening socket, then try a new connection.
      const refused = () =>
        fetchRaw(serve.url, `/${DEPOT_PATHS.catalog}`, { ca: pkiA.caCertPem }).then(
          () => false,
          () => true,
        );
      await until(refused, 'a new connection refused', { everyMs: 50 });
    });
    expect((await download).equals(BIG)).toBe(true);
    expect(await serve.exited).toBe(0);
    expect(serve.stderr()).toMatch(/Stopped/);
  });

  it('with --workers 2 runs two processes that both serve, and replaces a worker that dies', async () => {
    const serve = await spawnServe([root, '--host', '127.0.0.1', '--port', '0', '--http', '--workers', '2']);
    children.push(serve);
    const primary = serve.child.pid!;
    /**
     * Rounds of 16 connections held open at once, until every process in `pids` has accepted one (the kernel picks).
     * Bounded in time, not in rounds: a replacement serves once booted, which takes seconds on a busy machine.
     */
    async function serving(pids: number[]): Promise<Set<number>> {
      const seen = new Set<number>();
      const round = async (): Promise<boolean> => {
        const sockets = await openAnswered(serve.port, `/${DEPOT_PATHS.catalog}`, 16);
        for (const pid of await pidsServing(pids, serve.port)) seen.add(pid);
        for (const s of sockets) s.destroy();
        return seen.size === pids.length;
      };
      // The caller's assertion names the processes never seen.
      await until(round, 'every process to accept a connection', { timeoutMs: 20_000 }).catch(() => undefined);
      return seen;
    }
    const workers = await childPids(primary);
    expect(workers).toHaveLength(1);
    expect([...(await serving([primary, workers[0]!]))].sort()).toEqual([primary, workers[0]!].sort());

    process.kill(workers[0]!, 'SIGKILL');
    await serve.waitForStderr(/starting another/);
    // Listed as soon as forked; it serves once it has said so, which the rounds below wait for.
    const replacement = await until(
      async () => (await childPids(primary)).filter((p) => p !== workers[0]),
      (pids) => pids.length > 0,
      'the replacement worker',
      { everyMs: 50 },
    );
    expect(replacement).toHaveLength(1);
    expect(await serving(replacement)).toEqual(new Set(replacement));
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
  });

  it('--open leaves a prefix without credentials (curl, HEAD and GET) in every serving process; --json lists it', async () => {
    await writeCert(pkiA);
    await writeFile(join(dir, 'ca-a.pem'), pkiA.caCertPem);
    const ca = join(dir, 'ca-a.pem');
    const serve = await spawnServe([...tlsServeArgs(root, dir, { auth: true }), '--open', `${UMDS_PATCH_STORE_DIR}/`, '--open-hcl', '--workers', '2']);
    children.push(serve);
    expect(serve.info.open).toEqual([DEPOT_PATHS.hclDir, UMDS_PATCH_STORE_DIR]);
    const base = serve.url;
    for (const head of [true, false]) {
      expect(curlStatus(`${base}${OPEN_FILE}`, ca, { head }), `open, head ${head}`).toBe('200');
      expect(curlStatus(`${base}/${DEPOT_PATHS.hclAll}`, ca, { head }), `hcl, head ${head}`).toBe('200');
      expect(curlStatus(`${base}/${DEPOT_PATHS.catalog}`, ca, { head }), `catalog, head ${head}`).toBe('401');
      expect(curlStatus(`${base}/${UMDS_PATCH_STORE_DIR}-other/x`, ca, { head }), `sibling, head ${head}`).toBe('401');
      expect(curlStatus(`${base}/${DEPOT_PATHS.catalog}`, ca, { head, user: 'depot:depot-pw' }), `catalog with credentials, head ${head}`).toBe('200');
    }
    // Rounds of 16 anonymous connections held open at once, until both processes have answered one with 200.
    const primary = serve.child.pid!;
    const pids = [primary, ...(await childPids(primary))];
    expect(pids).toHaveLength(2);
    const seen = new Set<number>();
    for (let round = 0; round < 30 && seen.size < 2; round++) {
      const answered = await openTlsAnswered(serve.port, pkiA.caCertPem, OPEN_FILE, 16);
      expect(answered.map((a) => a.statusLine)).toEqual(Array(16).fill('HTTP/1.1 200 OK'));
      for (const pid of await pidsServing(pids, serve.port)) seen.add(pid);
      for (const a of answered) a.socket.destroy();
    }
    expect([...seen].sort()).toEqual([...pids].sort());
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
  });

  it('issues its own certificate with --ca, for the names given', async () => {
    const ca = join(dir, 'ca');
    await writeCaDir(ca, await createCa({ keySize: 2048 }));
    const serve = await spawnServe([
      root,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--ca',
      ca,
      '--dns',
      'depot.lab.local',
      '--dns',
      'localhost',
      '--ip',
      '127.0.0.1',
      '--workers',
      '1',
    ]);
    children.push(serve);
    const { readFile } = await import('node:fs/promises');
    const caPem = await readFile(join(ca, 'ca-cert.pem'), 'utf8');
    const cert = await peerCertificate(serve.port, caPem);
    expect(cert.subjectAltName).toContain('DNS:depot.lab.local');
    expect(cert.subjectAltName).toContain('IP Address:127.0.0.1');
    serve.child.kill('SIGINT');
    expect(await serve.exited).toBe(0);
  });

  it('refuses bad usage with one sentence and exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [[root, '--port', '0'], /No certificate given/],
      [[root, '--http', '--user', 'u', '--password-file', join(dir, 'password')], /clear text/],
      [[root, '--cert', join(dir, 'cert.pem')], /--cert and --key go together/],
      [[join(root, 'PROD'), '--http'], /PROD folder itself/],
      [[join(dir, 'missing'), '--http'], /does not exist/],
      [[root, '--http', '--password-file', join(dir, 'password')], /--password-file needs --user/],
      // One refusal of a number on the command line; the others are the option's parser's, below.
      [[root, '--http', '--workers', '0'], /at least 1/],
      [[root, '--http', '--dns', 'x'], /give --ca/],
      // One refusal of --open on the command line; the others are the library's, below.
      [[root, '--http', '--open', '/umds-patch-store'], /must be relative/],
    ];
    // Each a process of its own that ends at once: all started together.
    const results = await Promise.all(cases.map(([args]) => runCli(['serve', ...args])));
    for (const [i, [args, message]] of cases.entries()) {
      const r = results[i]!;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it("refuses a --send-timeout of 0 or not whole (serve's option parser), and a key that is not the certificate's (the library serve calls), as usage errors", async () => {
    const program = new Command();
    registerServeCommands(program);
    const sendTimeout = program.commands[0]!.options.find((o) => o.long === '--send-timeout')!;
    // The CLI prints what the parser throws as its one sentence, exit 2 (as --workers 0 above).
    expect(() => sendTimeout.parseArg!('0', undefined)).toThrow(/^--send-timeout must be at least 1 second\.$/);
    expect(() => sendTimeout.parseArg!('1.5', undefined)).toThrow(/^--send-timeout takes a whole number/);
    expect(sendTimeout.parseArg!('1', undefined)).toBe(1);
    // A key that is not the certificate's, in files of their own (other tests rewrite cert.pem and key.pem).
    await writeFile(join(dir, 'mismatch-cert.pem'), pkiA.certPem);
    await writeFile(join(dir, 'mismatch-key.pem'), pkiB.keyPem);
    const mismatch = await startDepotServer({
      root,
      host: '127.0.0.1',
      port: 0,
      tls: { certFile: join(dir, 'mismatch-cert.pem'), keyFile: join(dir, 'mismatch-key.pem') },
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(mismatch).toBeInstanceOf(DepotkitError);
    expect((mismatch as DepotkitError).exitCode).toBe(EXIT.usage);
    expect((mismatch as DepotkitError).message).toMatch(/does not belong to the certificate file/);
  });

  it.each([
    ['../umds-patch-store', /"\.\."/],
    ['.depotkit', /hidden/],
    ['PROD//vsan', /not a normalised path/],
    ['PROD/./vsan', /not a normalised path/],
    ['', /names no path/],
  ])('refuses --open %j with one sentence and exit 2 (openPrefixesOf, which serve calls)', (open, message) => {
    // The CLI prints a DepotkitError as its one sentence, without a stack, and exits with its code.
    const refused = (() => {
      try {
        openPrefixesOf({ openPrefixes: [open] });
      } catch (err) {
        return err;
      }
    })();
    expect(refused).toBeInstanceOf(DepotkitError);
    expect((refused as DepotkitError).exitCode).toBe(EXIT.usage);
    expect((refused as DepotkitError).message).toMatch(message);
  });
});
