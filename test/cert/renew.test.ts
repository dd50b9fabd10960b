import { X509Certificate } from 'node:crypto';
import { chmod, chown, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CA_CERT_FILE, SERVER_CERT_FILE, SERVER_CHAIN_FILE, SERVER_KEY_FILE } from '../../src/cert/files.js';
import { readCertificate } from '../../src/cert/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { peerCertificate, spawnServe, writeTree } from '../server/helpers.js';
import { openssl } from './openssl.js';

// `cert renew`: the server folder's certificate issued again with its names and key size by the same CA,
// written as a whole over the old files, and served after the same SIGHUP.
let dir: string;
let cleanup: () => Promise<void>;
let caDir: string;
let srvDir: string;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('depotkit-renew-'));
  caDir = join(dir, 'ca');
  srvDir = join(dir, 'srv');
  const ca = await runCli(['cert', 'ca', '--out', caDir, '--cn', 'Renew Lab CA', '--key-size', '2048', '--days', '365']);
  expect(ca.code, ca.stderr).toBe(0);
  const issue = await runCli([
    'cert',
    'issue',
    '--ca',
    caDir,
    '--dns',
    'localhost',
    '--dns',
    'depot.lab.local',
    '--ip',
    '127.0.0.1',
    '--key-size',
    '3072',
    '--days',
    '30',
    '--out',
    srvDir,
  ]);
  expect(issue.code, issue.stderr).toBe(0);
});
afterAll(() => cleanup());

const certIn = async (folder: string) => readCertificate(await readFile(join(folder, SERVER_CERT_FILE), 'utf8'));

it('re-issues with the same names, CN and key size over the old files (with --force), and serve sends it after SIGHUP', async () => {
  const root = await writeTree(join(dir, 'web'), { 'index.html': 'depot\n' });
  const caPem = await readFile(join(caDir, CA_CERT_FILE), 'utf8');
  const old = await certIn(srvDir);
  const serve = await spawnServe([
    root,
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--cert',
    join(srvDir, SERVER_CHAIN_FILE),
    '--key',
    join(srvDir, SERVER_KEY_FILE),
  ]);
  try {
    expect((await peerCertificate(serve.port, caPem)).fingerprint256).toBe(old.fingerprints.sha256);

    // The old files are not replaced unasked.
    const refused = await runCli(['cert', 'renew', srvDir, '--ca', caDir]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/already exists/);
    expect(refused.stderr).toContain('--force');
    expect((await certIn(srvDir)).fingerprints.sha256).toBe(old.fingerprints.sha256);

    const renewed = await runCli(['cert', 'renew', srvDir, '--ca', caDir, '--force', '--json']);
    expect(renewed.code, renewed.stderr).toBe(0);
    const fresh = await certIn(srvDir);
    expect(fresh.serial).not.toBe(old.serial);
    expect(fresh.san).toEqual(old.san);
    expect(fresh.commonName).toBe(old.commonName);
    expect(fresh.issuer).toBe(old.issuer);
    expect(fresh.key).toEqual({ type: 'rsa', bits: 3072 });
    expect(fresh.notAfter.getTime()).toBeGreaterThan(old.notAfter.getTime());
    expect((await stat(join(srvDir, SERVER_KEY_FILE))).mode & 0o777).toBe(0o600);
    const verify = openssl(['verify', '-x509_strict', '-CAfile', join(caDir, CA_CERT_FILE), join(srvDir, SERVER_CERT_FILE)]);
    expect(verify.code, verify.stderr).toBe(0);
    expect(JSON.parse(renewed.stdout)).toMatchObject({ previous: { serial: old.serial }, certificate: { serial: fresh.serial } });

    serve.child.kill('SIGHUP');
    await serve.waitForStderr(/Reloaded/);
    expect((await peerCertificate(serve.port, caPem)).fingerprint256).toBe(fresh.fingerprints.sha256);
  } finally {
    serve.child.kill('SIGTERM');
    await serve.exited;
  }
});

it('writes beside the old files with --out, leaving them as they were', async () => {
  const before = await certIn(srvDir);
  const beside = join(dir, 'srv-next');
  const r = await runCli(['cert', 'renew', srvDir, '--ca', caDir, '--out', beside]);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain('SIGHUP');
  expect((await certIn(srvDir)).fingerprints.sha256).toBe(before.fingerprints.sha256);
  const next = await certIn(beside);
  expect(next.san).toEqual(before.san);
  const chain = await readFile(join(beside, SERVER_CHAIN_FILE), 'utf8');
  expect(new X509Certificate(chain).fingerprint256).toBe(next.fingerprints.sha256);
});

it('refuses a CA folder that did not issue the certificate, in one sentence', async () => {
  const otherCa = join(dir, 'other-ca');
  expect((await runCli(['cert', 'ca', '--out', otherCa, '--cn', 'Other CA', '--key-size', '2048'])).code).toBe(0);
  const r = await runCli(['cert', 'renew', srvDir, '--ca', otherCa, '--out', join(dir, 'never')]);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/was not issued by the CA in/);
  expect(r.stderr).not.toMatch(/\n\s+at /);
});

// An exported Caddy site reads the key as the caddy user through the key's group (0640): a renewal in place
// that wrote it 0600 to its own user would stop Caddy at its next reload.
it.skipIf(process.getuid?.() !== 0)('keeps the owner, group and mode of the files it replaces (a key its server reads through its group)', async () => {
  const folder = join(dir, 'srv-group');
  const issued = await runCli(['cert', 'issue', '--ca', caDir, '--dns', 'localhost', '--key-size', '2048', '--out', folder]);
  expect(issued.code, issued.stderr).toBe(0);
  const gid = 1; // daemon: a group the server would run in, not root's
  await chown(join(folder, SERVER_KEY_FILE), 0, gid);
  await chmod(join(folder, SERVER_KEY_FILE), 0o640);
  await chown(join(folder, SERVER_CHAIN_FILE), 0, gid);
  const before = await certIn(folder);
  const renewed = await runCli(['cert', 'renew', folder, '--ca', caDir, '--force']);
  expect(renewed.code, renewed.stderr).toBe(0);
  expect((await certIn(folder)).serial).not.toBe(before.serial);
  const key = await stat(join(folder, SERVER_KEY_FILE));
  expect([key.mode & 0o777, key.gid]).toEqual([0o640, gid]);
  expect((await stat(join(folder, SERVER_CHAIN_FILE))).gid).toBe(gid);
  // Not group-readable before: stays the owner's only.
  expect((await stat(join(folder, SERVER_CERT_FILE))).gid).toBe(0);
});
