import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect, type SecureVersion } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDepotServer, type DepotServer } from '../../src/server/index.js';
import { useTempDir } from '../helpers/temp.js';
import { makePki, writeTree, type TestPki } from './helpers.js';

/** Runs openssl s_client against the server and returns what it printed (it exits non-zero on a failed handshake). */
function sClient(port: number, ca: string, args: string[]): Promise<string> {
  return new Promise((resolve) => {
    const child = execFile(
      'openssl',
      ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', 'localhost', '-CAfile', ca, ...args],
      (_err, stdout, stderr) => resolve(stdout + stderr),
    );
    child.stdin?.end('');
  });
}

function handshake(
  port: number,
  ca: string,
  options: { minVersion?: SecureVersion; maxVersion?: SecureVersion; ciphers?: string },
): Promise<{ protocol: string | null; cipher: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', ca, ...options }, () => {
      const result = { protocol: socket.getProtocol(), cipher: socket.getCipher().name };
      socket.end();
      resolve(result);
    });
    socket.on('error', reject);
  });
}

describe('TLS settings', () => {
  let pki: TestPki;
  let server: DepotServer;
  let caFile: string;
  const tmp = useTempDir();

  beforeAll(async () => {
    pki = await makePki();
    caFile = join(tmp.dir, 'ca.pem');
    await writeFile(caFile, pki.caCertPem);
    const root = await writeTree(join(tmp.dir, 'web'), { 'PROD/x.json': '{}' });
    server = await startDepotServer({ root, host: '127.0.0.1', port: 0, tls: { certPem: pki.certPem, keyPem: pki.keyPem } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('speaks TLS 1.3 and TLS 1.2 with AEAD suites, and refuses TLS 1.1 and CBC suites', async () => {
    expect((await handshake(server.port, pki.caCertPem, {})).protocol).toBe('TLSv1.3');
    const v12 = await handshake(server.port, pki.caCertPem, { maxVersion: 'TLSv1.2' });
    expect(v12.protocol).toBe('TLSv1.2');
    expect(v12.cipher).toMatch(/GCM|CHACHA20/);
    await expect(handshake(server.port, pki.caCertPem, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' })).rejects.toThrow();
    await expect(handshake(server.port, pki.caCertPem, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-SHA256:ECDHE-RSA-AES256-SHA' })).rejects.toThrow();
  });

  it('agrees with openssl s_client: a verified chain on 1.2 and 1.3, no CBC', async () => {
    for (const [flag, protocol] of [
      ['-tls1_3', 'TLSv1.3'],
      ['-tls1_2', 'TLSv1.2'],
    ]) {
      const out = await sClient(server.port, caFile, [flag!]);
      expect(out, flag).toMatch(/Verify return code: 0 \(ok\)/);
      expect(out, flag).toMatch(new RegExp(`New, ${protocol.replace('.', '\\.')}, Cipher is \\S*(GCM|CHACHA20)`));
    }
    const cbc = await sClient(server.port, caFile, ['-tls1_2', '-cipher', 'ECDHE-RSA-AES128-SHA']);
    expect(cbc).toMatch(/Cipher is \(NONE\)/);
    expect(cbc).toMatch(/no peer certificate available/);
  });
});
