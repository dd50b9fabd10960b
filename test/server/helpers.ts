import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { dirname, join } from 'node:path';
import { connect } from 'node:tls';
import { createCa, issueServerCert } from '../../src/pki/index.js';
import { CLI } from '../helpers/cli.js';

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
      { host: url.hostname, port: url.port, path, method: options.method ?? 'GET', headers: options.headers, agent: false, ...(isHttps ? { ca: options.ca, servername: 'localhost' } : {}) },
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
  stderr: () => string;
  /** Resolves when stderr has shown `pattern`. */
  waitForStderr(pattern: RegExp): Promise<void>;
  exited: Promise<number>;
}

/** Runs the built `depotkit serve ... --json` and waits until it listens. */
export function spawnServe(args: string[]): Promise<ServeChild> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args, '--json'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    for (const w of [...waiters]) {
      if (w.pattern.test(err)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      try {
        const info = JSON.parse(out) as { url: string; port: number };
        resolve({
          child,
          url: info.url,
          port: info.port,
          stderr: () => err,
          waitForStderr: (pattern) => (pattern.test(err) ? Promise.resolve() : new Promise((r) => waiters.push({ pattern, resolve: r }))),
          exited,
        });
      } catch {
        // Not the whole JSON yet.
      }
    });
    void exited.then((code) => reject(new Error(`depotkit serve exited with ${code}: ${err}`)));
  });
}
