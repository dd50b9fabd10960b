import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { connect, createServer, type Server } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCa, generateCsr, generateKeyPem, issueServerCert, signCsr, type CaMaterial } from '../../src/cert/index.js';
import { brokenServerCert } from '../helpers/certs.js';
import { useTempDir } from '../helpers/temp.js';

const HOST = 'depot.lab.local';
const tmp = useTempDir();
let ca: CaMaterial;
beforeAll(async () => {
  ca = await createCa({ keySize: 2048 });
});

async function listen(keyPem: string, certPem: string): Promise<{ server: Server; port: number }> {
  const server = createServer({ key: keyPem, cert: certPem }, (socket) => socket.end('hello\n'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** A TLS client that trusts only `caPem`, as the installer trusts only its own store. */
function handshake(port: number, caPem: string, servername?: string): Promise<{ ok: true } | { ok: false; code: string }> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, ca: [caPem], ...(servername ? { servername } : {}) });
    socket.once('secureConnect', () => {
      socket.destroy();
      resolve({ ok: true });
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve({ ok: false, code: err.code ?? err.message }));
  });
}

async function withServer<T>(material: { keyPem: string; certPem: string }, fn: (port: number) => Promise<T>): Promise<T> {
  const { server, port } = await listen(material.keyPem, material.certPem);
  try {
    return await fn(port);
  } finally {
    await new Promise((r) => server.close(r));
  }
}

describe('TLS with a Node client trusting only the CA', () => {
  it('connects with the right servername and fails with a wrong one or another CA', async () => {
    const s = await issueServerCert(ca, { dns: [HOST], ips: ['127.0.0.1'] });
    const other = await createCa({ keySize: 2048 });
    await withServer({ keyPem: s.keyPem, certPem: s.chainPem }, async (port) => {
      expect(await handshake(port, ca.certPem, HOST)).toEqual({ ok: true });
      expect(await handshake(port, ca.certPem, 'DEPOT.LAB.LOCAL')).toEqual({ ok: true });
      // Without a servername Node checks the IP it dialled against the IP SAN.
      expect(await handshake(port, ca.certPem)).toEqual({ ok: true });
      expect(await handshake(port, ca.certPem, 'other.lab.local')).toEqual({ ok: false, code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
      const foreign = await handshake(port, other.certPem, HOST);
      expect(foreign.ok).toBe(false);
      expect(foreign).not.toEqual({ ok: false, code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    });
  });

  it('serves a certificate signed from a CSR', async () => {
    const keyPem = await generateKeyPem(2048);
    const certPem = await signCsr(ca, generateCsr({ keyPem, commonName: 'vc.lab.local', dns: ['vc.lab.local'] }));
    await withServer({ keyPem, certPem }, async (port) => {
      expect(await handshake(port, ca.certPem, 'vc.lab.local')).toEqual({ ok: true });
      expect(await handshake(port, ca.certPem, HOST)).toEqual({ ok: false, code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    });
  });

  it('refuses the broken certificates of the test helper the way a strict client does', async () => {
    const expectations: Array<[Parameters<typeof brokenServerCert>[1], string]> = [
      ['wrong-host', 'ERR_TLS_CERT_ALTNAME_INVALID'],
      ['expired', 'CERT_HAS_EXPIRED'],
      ['self-signed', 'DEPTH_ZERO_SELF_SIGNED_CERT'],
    ];
    for (const [kind, code] of expectations) {
      const bad = brokenServerCert(ca, kind, HOST);
      await withServer(bad, async (port) => {
        expect(await handshake(port, ca.certPem, HOST), kind).toEqual({ ok: false, code });
      });
    }
    // Node accepts an IP as CN when the SAN is right, and falls back to the CN without a SAN;
    // the installer's Java client accepts neither, which is why the lint reports both.
    for (const kind of ['ip-cn', 'no-san'] as const) {
      await withServer(brokenServerCert(ca, kind, HOST), async (port) => {
        expect(await handshake(port, ca.certPem, HOST), kind).toEqual({ ok: true });
      });
    }
  });
});

describe('TLS with curl', () => {
  let server: HttpsServer;
  let port: number;
  beforeAll(async () => {
    const s = await issueServerCert(ca, { dns: [HOST] });
    server = createHttpsServer({ key: s.keyPem, cert: s.chainPem }, (_req, res) => res.end('depot\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    await writeFile(join(tmp.dir, 'ca.pem'), ca.certPem);
  });
  afterAll(() => new Promise((r) => server.close(r)));

  // Asynchronous: the server runs in this process.
  const curl = (host: string) =>
    new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        'curl',
        ['-sS', '--max-time', '20', '--cacert', join(tmp.dir, 'ca.pem'), '--resolve', `${host}:${port}:127.0.0.1`, `https://${host}:${port}/`],
        (err, stdout, stderr) => resolve({ status: err ? Number((err as { code?: number }).code) : 0, stdout, stderr }),
      );
    });

  it('accepts the depot certificate for its name and rejects it for another', async () => {
    const ok = await curl(HOST);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toBe('depot\n');
    const bad = await curl('other.lab.local');
    expect(bad.status).toBe(60); // curl: peer certificate cannot be authenticated
  });
});
