import { X509Certificate } from 'node:crypto';
import { chmod, chown, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { CA_CERT_FILE, SERVER_CERT_FILE, SERVER_CHAIN_FILE, SERVER_KEY_FILE } from '../../src/cert/files.js';
import { createCa, issueCert, readCertificate, renewCert, writeCaDir } from '../../src/cert/index.js';
import { startDepotServer } from '../../src/server/index.js';
import { runCli } from '../helpers/cli.js';
import { useTempDir } from '../helpers/temp.js';
import { peerCertificate, writeTree } from '../server/helpers.js';
import { openssl } from './openssl.js';

// `cert renew`: the server folder's certificate issued again with its names and key size by the same CA,
// written as a whole over the old files, and served after the server's reload (serve's SIGHUP runs that
// reload: test/server/reload.test.ts).
const tmp = useTempDir('depotkit-renew-');
let caDir: string;
let srvDir: string;

beforeAll(async () => {
  caDir = join(tmp.dir, 'ca');
  srvDir = join(tmp.dir, 'srv');
  await writeCaDir(caDir, await createCa({ cn: 'Renew Lab CA', keySize: 2048, days: 365 }));
  await issueCert(srvDir, { caDir, dns: ['localhost', 'depot.lab.local'], ips: ['127.0.0.1'], keySize: 3072, days: 30 });
});

const certIn = async (folder: string) => readCertificate(await readFile(join(folder, SERVER_CERT_FILE), 'utf8'));

it('re-issues with the same names, CN and key size over the old files (with force), and the server sends it after its reload', async () => {
  const root = await writeTree(join(tmp.dir, 'web'), { 'index.html': 'depot\n' });
  const caPem = await readFile(join(caDir, CA_CERT_FILE), 'utf8');
  const old = await certIn(srvDir);
  const server = await startDepotServer({
    root,
    host: '127.0.0.1',
    port: 0,
    tls: { certFile: join(srvDir, SERVER_CHAIN_FILE), keyFile: join(srvDir, SERVER_KEY_FILE) },
  });
  try {
    expect((await peerCertificate(server.port, caPem)).fingerprint256).toBe(old.fingerprints.sha256);

    // The old files are not replaced unasked: the command line says how to.
    const refused = await runCli(['cert', 'renew', srvDir, '--ca', caDir]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/already exists/);
    expect(refused.stderr).toContain('--force');
    expect((await certIn(srvDir)).fingerprints.sha256).toBe(old.fingerprints.sha256);

    const renewed = await renewCert(srvDir, { caDir, force: true });
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
    expect(renewed).toMatchObject({ previous: { serial: old.serial }, certificate: { serial: fresh.serial } });

    await server.reloadTls();
    expect((await peerCertificate(server.port, caPem)).fingerprint256).toBe(fresh.fingerprints.sha256);
  } finally {
    await server.close();
  }
});

it('writes beside the old files with --out, leaving them as they were, and says how serve picks them up', async () => {
  const before = await certIn(srvDir);
  const beside = join(tmp.dir, 'srv-next');
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
  const otherCa = join(tmp.dir, 'other-ca');
  await writeCaDir(otherCa, await createCa({ cn: 'Other CA', keySize: 2048 }));
  await expect(renewCert(srvDir, { caDir: otherCa, outDir: join(tmp.dir, 'never') })).rejects.toMatchObject({
    exitCode: 2,
    message: expect.stringMatching(/was not issued by the CA in/),
  });
});

// An exported Caddy site reads the key as the caddy user through the key's group (0640): a renewal in place
// that wrote it 0600 to its own user would stop Caddy at its next reload.
it.skipIf(process.getuid?.() !== 0)('keeps the owner, group and mode of the files it replaces (a key its server reads through its group)', async () => {
  const folder = join(tmp.dir, 'srv-group');
  await issueCert(folder, { caDir, dns: ['localhost'], keySize: 2048 });
  const gid = 1; // daemon: a group the server would run in, not root's
  await chown(join(folder, SERVER_KEY_FILE), 0, gid);
  await chmod(join(folder, SERVER_KEY_FILE), 0o640);
  await chown(join(folder, SERVER_CHAIN_FILE), 0, gid);
  const before = await certIn(folder);
  await renewCert(folder, { caDir, force: true });
  expect((await certIn(folder)).serial).not.toBe(before.serial);
  const key = await stat(join(folder, SERVER_KEY_FILE));
  expect([key.mode & 0o777, key.gid]).toEqual([0o640, gid]);
  expect((await stat(join(folder, SERVER_CHAIN_FILE))).gid).toBe(gid);
  // Not group-readable before: stays the owner's only.
  expect((await stat(join(folder, SERVER_CERT_FILE))).gid).toBe(0);
});
