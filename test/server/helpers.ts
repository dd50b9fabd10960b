import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdir, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { connect as tcpConnect, type Socket } from 'node:net';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { dirname, join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll } from 'vitest';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { DEPOT_PATHS } from '../../src/constants.js';
import { spawnCliJson } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

export interface TestPki {
  caCertPem: string;
  certPem: string;
  keyPem: string;
}

/** A CA and a server certificate for localhost and 127.0.0.1. */
export async function makePki(cn = 'serve test CA'): Promise<TestPki> {
  const ca = await createCa({ cn, keySize: 2048 });
  const server = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'] });
  return { caCertPem: ca.certPem, certPem: server.chainPem, keyPem: server.keyPem };
}

/** Writes `files` (path relative to `root` → content) and returns the root. */
export async function writeTree(root: string, files: Record<string, string | Buffer>): Promise<string> {
  for (const [rel, content] of Object.entries(files)) {
    const path = join(root, rel);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content);
  }
  return root;
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** One request on a fresh connection; `path` is sent exactly as given. */
export function fetchRaw(base: string, path: string, options: { method?: string; headers?: Record<string, string>; ca?: string } = {}): Promise<Reply> {
  const url = new URL(base);
  const isHttps = url.protocol === 'https:';
  const send = isHttps ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: false,
        ...(isHttps ? { ca: options.ca, servername: 'localhost' } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The certificate a new TLS connection is given. */
export function peerCertificate(port: number, ca: string): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', ca }, () => {
      const raw = socket.getPeerX509Certificate();
      socket.end();
      if (raw) resolve(raw);
      else reject(new Error('no peer certificate'));
    });
    socket.on('error', reject);
  });
}

export interface ServeChild {
  child: ChildProcessWithoutNullStreams;
  url: string;
  port: number;
  /** Everything `serve --json` printed once ready. */
  info: Record<string, unknown>;
  stderr: () => string;
  /** Resolves when stderr has shown `pattern`. */
  waitForStderr(pattern: RegExp): Promise<void>;
  exited: Promise<number>;
}

/** Runs the built `depotkit serve ... --json` (with `env` added to the environment) and waits until it listens. */
export async function spawnServe(args: string[], env?: NodeJS.ProcessEnv): Promise<ServeChild> {
  const started = await spawnCliJson<{ url: string; port: number } & Record<string, unknown>>(['serve', ...args, '--json'], { env });
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  started.child.stderr.on('data', () => {
    for (const w of [...waiters]) {
      if (w.pattern.test(started.stderr())) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  return {
    child: started.child,
    url: started.info.url,
    port: started.info.port,
    info: started.info,
    stderr: started.stderr,
    waitForStderr: (pattern) => (pattern.test(started.stderr()) ? Promise.resolve() : new Promise((r) => waiters.push({ pattern, resolve: r }))),
    exited: started.exited,
  };
}

/** The processes whose parent is `pid` (Linux /proc). */
export async function childPids(pid: number): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // The fields after the command name, which is in parentheses and may hold spaces: state, ppid, ...
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === pid) found.push(Number(entry));
  }
  return found;
}

/** Of `pids`, those holding an established TCP connection whose local port is `port` (Linux /proc), i.e. that accepted one. */
export async function pidsServing(pids: number[], port: number): Promise<Set<number>> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 01 is ESTABLISHED; field 9 is the socket's inode.
      if (f.length > 9 && parseInt(f[1]!.split(':')[1]!, 16) === port && f[3] === '01') inodes.add(f[9]!);
    }
  }
  const serving = new Set<number>();
  for (const pid of pids) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
    for (const fd of fds) {
      const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
      if (inode && inodes.has(inode)) serving.add(pid);
    }
  }
  return serving;
}

/** Opens `n` plain HTTP keep-alive connections at once and waits until each has been answered (so each is accepted and stays open). */
export async function openAnswered(port: number, path: string, n: number): Promise<Socket[]> {
  return Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = tcpConnect({ host: '127.0.0.1', port }, () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
          socket.once('data', () => resolve(socket));
          socket.once('error', reject);
        }),
    ),
  );
}

/**
 * Rounds of `perRound` TLS connections to `port` held open at once (certificate not verified, so a wrong one is
 * seen rather than refused), until every process in `pids` has accepted one of them (the kernel picks) or
 * `rounds` are done. Returns the issuer of the certificate each connection got, or the handshake's error, and
 * the processes seen serving.
 */
export async function certificatesAcross(port: number, pids: number[], rounds = 30, perRound = 16): Promise<{ issuers: string[]; seen: Set<number> }> {
  const issuers: string[] = [];
  const seen = new Set<number>();
  for (let round = 0; round < rounds && seen.size < pids.length; round++) {
    const sockets = await Promise.all(
      Array.from(
        { length: perRound },
        () =>
          new Promise<{ socket?: TLSSocket; issuer: string }>((resolve) => {
            const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false }, () =>
              resolve({ socket, issuer: socket.getPeerX509Certificate()?.issuer ?? 'no certificate' }),
            );
            socket.once('error', (err) => resolve({ issuer: `handshake failed: ${err.message}` }));
          }),
      ),
    );
    for (const pid of await pidsServing(pids, port)) seen.add(pid);
    for (const s of sockets) {
      issuers.push(s.issuer);
      s.socket?.destroy();
    }
  }
  return { issuers, seen };
}

/** serve's arguments for `root` over TLS on a free port of 127.0.0.1, with dir's cert.pem and key.pem (and the user depot, dir/password). */
export function tlsServeArgs(root: string, dir: string, opts: { auth?: boolean } = {}): string[] {
  const tls = [root, '--host', '127.0.0.1', '--port', '0', '--cert', join(dir, 'cert.pem'), '--key', join(dir, 'key.pem')];
  return opts.auth ? [...tls, '--user', 'depot', '--password-file', join(dir, 'password')] : tls;
}

/** A temporary folder with a depot root (an empty catalog under `web`), and the serve runs started there. */
export interface ServeRuns {
  readonly dir: string;
  readonly root: string;
  /** Each serve run started: killed after the block's tests. */
  readonly children: ServeChild[];
}

/** For the describe block (or file) that calls it: the folder made before its tests; runs killed and folder removed after them. */
export function useServeRuns(prefix?: string): ServeRuns {
  let tmp: { dir: string; cleanup: () => Promise<void> } | undefined;
  let root = '';
  const children: ServeChild[] = [];
  beforeAll(async () => {
    tmp = await tempDir(prefix);
    root = await writeTree(join(tmp.dir, 'web'), { [DEPOT_PATHS.catalog]: '{"patches": {}}\n' });
  });
  afterAll(async () => {
    for (const c of children) c.child.kill('SIGKILL');
    await tmp?.cleanup();
  });
  return {
    get dir() {
      return tmp!.dir;
    },
    get root() {
      return root;
    },
    children,
  };
}
