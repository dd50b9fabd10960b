import { execFile } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { readFile, stat, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CA_CERT_FILE,
  CA_KEY_FILE,
  createCa,
  generateKeyPem,
  readCertificate,
  issueServerCert,
  loadCaDir,
  selfSignedServerCertificate,
  writeCaDir,
  type CaMaterial,
} from '../../src/cert/index.js';
import { customCa } from '../helpers/certs.js';
import { useKeySource } from '../../src/cert/keys.js';
import { lastingKeyPems, lastingKeys, pooledKeys, pooledKeysEnv } from '../helpers/key-pool.js';
import { poolSource } from '../setup/keys.js';
import { tempDir } from '../helpers/temp.js';
import { extensionText, openssl, x509Text } from './openssl.js';
import { usageRefusal } from './refusal.js';
import { onTheCommandLine } from './words.js';

const DAY = 86_400_000;
let dir: string;
let cleanup: () => Promise<void>;
let ca: CaMaterial;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  ca = await createCa({ cn: 'Lab Root CA', days: 400, keySize: 2048 });
});
afterAll(() => cleanup());

async function caDirWith(name: string, files: { key?: string; cert?: string }): Promise<string> {
  const d = join(dir, name);
  await mkdir(d, { recursive: true });
  if (files.key !== undefined) await writeFile(join(d, CA_KEY_FILE), files.key);
  if (files.cert !== undefined) await writeFile(join(d, CA_CERT_FILE), files.cert);
  return d;
}

const loadError = (d: string) => usageRefusal(loadCaDir(d));

describe('createCa', () => {
  it('makes a v3 CA with critical CA:TRUE pathlen 0, critical keyCertSign+cRLSign and a key id, as openssl reads it', async () => {
    const path = join(dir, 'ca-only.pem');
    await writeFile(path, ca.certPem);
    const text = x509Text(path);
    expect(text).toContain('Version: 3 (0x2)');
    expect(extensionText(text, 'Basic Constraints')).toEqual({ header: 'X509v3 Basic Constraints: critical', value: 'CA:TRUE, pathlen:0' });
    expect(extensionText(text, 'Key Usage')).toEqual({ header: 'X509v3 Key Usage: critical', value: 'Certificate Sign, CRL Sign' });
    const ski = extensionText(text, 'Subject Key Identifier')!.value;
    expect(ski).toMatch(/^([0-9A-F]{2}:){19}[0-9A-F]{2}$/);
    expect(extensionText(text, 'Authority Key Identifier')!.value.replace(/^keyid:/, '')).toBe(ski);
    expect(text).toContain('Subject: CN = Lab Root CA');
    expect(openssl(['verify', '-x509_strict', '-CAfile', path, path]).code).toBe(0);
  });

  it('sets notAfter from --days (forge would leave it equal to notBefore) and backdates notBefore by an hour', () => {
    const info = readCertificate(ca.certPem);
    expect(info.notAfter.getTime() - info.notBefore.getTime()).toBe(400 * DAY);
    expect(Date.now() - info.notBefore.getTime()).toBeGreaterThanOrEqual(3_590_000);
    expect(Date.now() - info.notBefore.getTime()).toBeLessThan(3_700_000);
  });

  it('uses the defaults: 10 years, 3072-bit key, the depotkit CN', async () => {
    const def = await createCa();
    const info = readCertificate(def.certPem);
    expect(info.key).toEqual({ type: 'rsa', bits: 3072 });
    expect(info.notAfter.getTime() - info.notBefore.getTime()).toBe(3650 * DAY);
    expect(info.commonName).toBe('depotkit private CA');
    expect(info.isCa).toBe(true);
    expect(info.pathLen).toBe(0);
    expect(def.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
  });

  it('refuses a key size other than 2048, 3072 or 4096, and an empty CN', async () => {
    await expect(createCa({ keySize: 1024 as 2048 })).rejects.toThrow(/2048, 3072, 4096 bits, not 1024/);
    await expect(createCa({ cn: '  ' })).rejects.toThrow(/must not be empty/);
    await expect(generateKeyPem(512)).rejects.toThrow(/not 512/);
  });

  it('makes each key afresh with node:crypto unless a key source is set (the suite sets its pool)', async () => {
    const pooled = await generateKeyPem(2048);
    expect(await generateKeyPem(2048)).not.toBe(pooled);
    useKeySource(undefined);
    try {
      const [a, b] = await Promise.all([generateKeyPem(2048), generateKeyPem(2048)]);
      expect(a).not.toBe(b);
      expect(createPrivateKey(a).asymmetricKeyDetails?.modulusLength).toBe(2048);
      expect(pooledKeys()).not.toContain(a);
    } finally {
      useKeySource(poolSource);
    }
  });
  it("keeps the key of a certificate a helper holds for the worker's life from every other certificate of the process", async () => {
    // Two self-signed certificates of one name and one key have one key id: a client trusting both can take the one
    // for the other (DEPTH_ZERO_SELF_SIGNED_CERT), as a simulator's lasting certificate and a test's own once did.
    const [a, b] = await lastingKeys(() => Promise.all([selfSignedServerCertificate('127.0.0.1', '127.0.0.1', 30), generateKeyPem(2048)]));
    expect(a.keyPem).not.toBe(b);
    const others = await Promise.all(Array.from({ length: 2 * pooledKeys().length }, () => generateKeyPem(2048)));
    expect(others).not.toContain(a.keyPem);
    expect(others).not.toContain(b);
  });

  it("keeps those keys from the CLI's children too, which take theirs from the same pool", async () => {
    const script = `const { generateKeyPair } = await import('node:crypto'); const { promisify } = await import('node:util');
      const pem = { publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } };
      const keys = []; for (let i = 0; i < 40; i++) keys.push((await promisify(generateKeyPair)('rsa', { modulusLength: 2048, ...pem })).privateKey);
      process.stdout.write(JSON.stringify(keys));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, ...pooledKeysEnv() } });
    const taken = JSON.parse(stdout) as string[];
    const kept = lastingKeyPems(2048);
    expect(kept).toHaveLength(6);
    expect(taken.every((k) => pooledKeys().includes(k))).toBe(true);
    expect(taken.filter((k) => kept.includes(k))).toEqual([]);
  });
});

describe('validity limits', () => {
  const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59);

  it('refuses a validity ending after 9999-12-31T23:59:59Z with one sentence, and makes one ending just before it', async () => {
    const err = await usageRefusal(createCa({ days: 3_000_000, keySize: 2048 }));
    expect(err.message).toBe('A validity of 3000000 days would end after 9999-12-31T23:59:59Z, the latest date a certificate can hold.');
    const lastDays = Math.floor((LATEST - Date.now()) / DAY);
    await expect(createCa({ days: lastDays + 2, keySize: 2048 })).rejects.toThrow(/would end after 9999-12-31T23:59:59Z/);
    const longest = await createCa({ days: lastDays, keySize: 2048 });
    const path = join(dir, 'longest-ca.pem');
    await writeFile(path, longest.certPem);
    expect(openssl(['x509', '-in', path, '-noout', '-enddate']).stdout).toMatch(/^notAfter=Dec (30|31) \d\d:\d\d:\d\d 9999 GMT$/m);
    // A leaf from it is capped at the CA's end and verifies.
    const leaf = await issueServerCert(longest, { dns: ['depot.lab.local'], days: 825 });
    const leafPath = join(dir, 'longest-leaf.pem');
    await writeFile(leafPath, leaf.certPem);
    expect(openssl(['verify', '-x509_strict', '-CAfile', path, leafPath]).code).toBe(0);
  });

  it('refuses a server certificate ending after 9999 even from a valid CA', async () => {
    await expect(issueServerCert(ca, { dns: ['depot.lab.local'], days: 3_000_000 })).rejects.toThrow(
      /^A validity of 3000000 days would end after 9999-12-31T23:59:59Z/,
    );
  });

  it('refuses a CA whose notAfter or notBefore cannot be read (a year past 9999), so no leaf is made already expired', async () => {
    const brokenEnd = customCa({ notAfter: new Date(Date.UTC(10240, 0, 1)) });
    const endDir = await caDirWith('bad-end', { key: brokenEnd.keyPem, cert: brokenEnd.certPem });
    // openssl agrees that the date is unreadable.
    expect(openssl(['x509', '-in', join(endDir, CA_CERT_FILE), '-noout', '-enddate']).stdout).toContain('Bad time value');
    expect((await loadError(endDir)).message).toMatch(/ca-cert\.pem \(CN=test CA\) has a validity date that cannot be read/);
    await expect(issueServerCert(brokenEnd, { dns: ['depot.lab.local'] })).rejects.toThrow(/has a validity date that cannot be read/);
    const brokenStart = customCa({ notBefore: new Date(Date.UTC(10240, 0, 1)), notAfter: new Date(Date.now() + 365 * DAY) });
    expect((await loadError(await caDirWith('bad-start', { key: brokenStart.keyPem, cert: brokenStart.certPem }))).message).toMatch(
      /has a validity date that cannot be read/,
    );
  });
});

describe('serials', () => {
  it('are random, positive and 128 bits (forge would use 00)', async () => {
    const serials = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const s = await issueServerCert(ca, { dns: ['a.lab.local'] });
      serials.add(readCertificate(s.certPem).serial);
    }
    serials.add(readCertificate(ca.certPem).serial);
    expect(serials.size).toBe(4);
    for (const s of serials) {
      expect(s).toMatch(/^[0-9A-F]{32}$/);
      expect(parseInt(s[0]!, 16)).toBeLessThan(8); // top bit clear: positive without a pad byte
      expect(parseInt(s[0]!, 16)).toBeGreaterThanOrEqual(4); // no leading zero byte
    }
  });
});

describe('CA folders', () => {
  it('writes the key 0600 and the certificate, refuses to overwrite without force, and loads back', async () => {
    const d = join(dir, 'ca-dir');
    const { keyPath, certPath } = await writeCaDir(d, ca);
    expect((await stat(keyPath)).mode & 0o777).toBe(0o600);
    expect((await stat(certPath)).mode & 0o777).toBe(0o644);
    await expect(writeCaDir(d, ca)).rejects.toThrow(/ca-key\.pem already exists/);
    const other = await createCa({ keySize: 2048 });
    await writeCaDir(d, other, { force: true });
    expect(await readFile(certPath, 'utf8')).toBe(other.certPem);
    const loaded = await loadCaDir(d);
    expect(loaded.certPem).toBe(other.certPem);
    expect(createPrivateKey(loaded.keyPem).asymmetricKeyDetails?.modulusLength).toBe(2048);
  });

  it('loads a CA written with CRLF line ends and text around the blocks', async () => {
    const d = await caDirWith('crlf', { key: `note\r\n${ca.keyPem.replace(/\n/g, '\r\n')}`, cert: `  ${ca.certPem.replace(/\n/g, '\r\n')}\r\n\r\n` });
    expect((await loadCaDir(d)).certPem).toBe(ca.certPem);
  });

  it('says which file is missing', async () => {
    const d = await caDirWith('empty', {});
    expect((await loadError(d)).message).toBe(`${join(d, CA_CERT_FILE)} does not exist; ${d} is not a CA folder.`);
  });

  it('refuses a "CA" that is not a CA', async () => {
    const server = await issueServerCert(ca, { dns: ['depot.lab.local'] });
    const d = await caDirWith('leaf', { key: server.keyPem, cert: server.certPem });
    expect((await loadError(d)).message).toMatch(/\(CN=depot\.lab\.local\) is not a CA certificate: it lacks basicConstraints CA:TRUE/);
    const fake = customCa({ isCa: false });
    expect((await loadError(await caDirWith('fake', { key: fake.keyPem, cert: fake.certPem }))).message).toMatch(/is not a CA certificate/);
  });

  it('refuses an expired CA and one not yet valid', async () => {
    const expired = customCa({ notBefore: new Date(Date.now() - 20 * DAY), notAfter: new Date(Date.now() - DAY) });
    expect((await loadError(await caDirWith('expired', { key: expired.keyPem, cert: expired.certPem }))).message).toMatch(
      /ca-cert\.pem \(CN=test CA\) expired on 20\d\d-/,
    );
    const future = customCa({ notBefore: new Date(Date.now() + 2 * DAY), notAfter: new Date(Date.now() + 20 * DAY) });
    expect((await loadError(await caDirWith('future', { key: future.keyPem, cert: future.certPem }))).message).toMatch(
      /is not valid before .*check this machine's clock/,
    );
  });

  it('refuses a key that does not match the certificate', async () => {
    const other = await createCa({ keySize: 2048 });
    const d = await caDirWith('mismatch', { key: other.keyPem, cert: ca.certPem });
    expect((await loadError(d)).message).toBe(`${join(d, CA_KEY_FILE)} does not belong to ${join(d, CA_CERT_FILE)}: they are not a pair.`);
  });

  it('refuses an encrypted key without its passphrase, PKCS#8 or legacy, and decrypts it with the right one', async () => {
    const keyPath = join(dir, 'plain-key.pem');
    await writeFile(keyPath, ca.keyPem);
    const pkcs8 = openssl(['pkey', '-in', keyPath, '-aes256', '-passout', 'pass:secret']);
    expect(pkcs8.stdout).toContain('ENCRYPTED PRIVATE KEY');
    const legacy = openssl(['rsa', '-in', keyPath, '-aes128', '-passout', 'pass:secret', '-traditional']);
    expect(legacy.stdout).toContain('Proc-Type: 4,ENCRYPTED');
    for (const [name, key] of [
      ['enc8', pkcs8.stdout],
      ['enc1', legacy.stdout],
    ] as const) {
      const d = await caDirWith(name, { key, cert: ca.certPem });
      const err = await loadError(d);
      expect(err.message).toBe(`${join(d, CA_KEY_FILE)} is encrypted and no passphrase was given.`);
      expect(onTheCommandLine(err.fix)).toMatch(/--ca-passphrase-file FILE or --ca-passphrase-env NAME/);
      const wrong = await loadCaDir(d, { passphrase: 'wrong' }).catch((e: unknown) => e);
      expect((wrong as Error).message).toBe(`${join(d, CA_KEY_FILE)} cannot be decrypted with the given passphrase.`);
      const loaded = await loadCaDir(d, { passphrase: 'secret' });
      const leaf = await issueServerCert(loaded, { dns: ['depot.lab.local'] });
      expect(readCertificate(leaf.certPem).issuer).toBe('CN=Lab Root CA');
    }
  });

  it('writes the CA key encrypted when given a passphrase; openssl decrypts it', async () => {
    const d = join(dir, 'encrypted-ca');
    const { keyPath } = await writeCaDir(d, ca, { passphrase: 'correct horse' });
    const text = await readFile(keyPath, 'utf8');
    expect(text).toMatch(/^-----BEGIN ENCRYPTED PRIVATE KEY-----\n/);
    expect((await stat(keyPath)).mode & 0o777).toBe(0o600);
    const plain = openssl(['pkey', '-in', keyPath, '-passin', 'pass:correct horse']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(createPrivateKey(plain.stdout).export({ type: 'pkcs8', format: 'pem' })).toBe(createPrivateKey(ca.keyPem).export({ type: 'pkcs8', format: 'pem' }));
    await expect(loadCaDir(d)).rejects.toThrow(/is encrypted and no passphrase was given/);
    expect((await loadCaDir(d, { passphrase: 'correct horse' })).passphrase).toBe('correct horse');
    await expect(writeCaDir(join(dir, 'empty-pass'), ca, { passphrase: '' })).rejects.toThrow(/must not be empty/);
  });

  it('accepts a PKCS#1 key', async () => {
    const keyPath = join(dir, 'plain-key1.pem');
    await writeFile(keyPath, ca.keyPem);
    const pkcs1 = openssl(['rsa', '-in', keyPath, '-traditional']).stdout;
    expect(pkcs1).toContain('BEGIN RSA PRIVATE KEY');
    expect((await loadCaDir(await caDirWith('pkcs1', { key: pkcs1, cert: ca.certPem }))).keyPem).toContain('RSA PRIVATE KEY');
  });

  it('refuses malformed PEM and a non-RSA key', async () => {
    const truncated = ca.certPem.slice(0, 200);
    expect((await loadError(await caDirWith('trunc', { key: ca.keyPem, cert: truncated }))).message).toMatch(
      /ca-cert\.pem is malformed: the CERTIFICATE block has no END line/,
    );
    const garbage = `-----BEGIN CERTIFICATE-----\nQUJDRA==\n-----END CERTIFICATE-----\n`;
    expect((await loadError(await caDirWith('garbage', { key: ca.keyPem, cert: garbage }))).message).toMatch(/is not a readable X\.509 certificate/);
    const ec = openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']).stdout;
    expect((await loadError(await caDirWith('ec', { key: ec, cert: ca.certPem }))).message).toMatch(
      /ca-key\.pem is a ec key; depotkit signs with RSA keys only/,
    );
  });
});
