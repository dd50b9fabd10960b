import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCa, readCertificate, issueServerCert, splitPemBlocks, writeServerDir, type CaMaterial } from '../../src/cert/index.js';
import { useTempDir } from '../helpers/temp.js';
import { extensionText, openssl, opensslRoot, x509Text } from './openssl.js';
import { onTheCommandLine } from './words.js';

const DAY = 86_400_000;
const tmp = useTempDir();
let ca: CaMaterial;
let caPath: string;
beforeAll(async () => {
  ca = await createCa({ keySize: 2048 });
  caPath = join(tmp.dir, 'ca.pem');
  await writeFile(caPath, ca.certPem);
});

async function save(name: string, pem: string): Promise<string> {
  const path = join(tmp.dir, name);
  await writeFile(path, pem);
  return path;
}

describe('issueServerCert', () => {
  it('makes a server certificate that openssl verifies strictly, with the profile the installer needs', async () => {
    const s = await issueServerCert(ca, { dns: ['Depot.Lab.Local', 'depot', '*.apps.lab.local'], ips: ['10.0.0.5', 'fd00:0:0::1'] });
    const path = await save('server.pem', s.certPem);
    const verify = openssl(['verify', '-x509_strict', '-purpose', 'sslserver', '-CAfile', caPath, path]);
    expect(verify.stdout + verify.stderr).toContain(': OK');
    expect(verify.code).toBe(0);
    const text = x509Text(path);
    expect(text).toContain('Subject: CN = depot.lab.local');
    expect(extensionText(text, 'Subject Alternative Name')!.value).toBe(
      'DNS:depot.lab.local, DNS:depot, DNS:*.apps.lab.local, IP Address:10.0.0.5, IP Address:FD00:0:0:0:0:0:0:1',
    );
    expect(extensionText(text, 'Basic Constraints')).toEqual({ header: 'X509v3 Basic Constraints: critical', value: 'CA:FALSE' });
    expect(extensionText(text, 'Key Usage')).toEqual({ header: 'X509v3 Key Usage: critical', value: 'Digital Signature, Key Encipherment' });
    expect(extensionText(text, 'Extended Key Usage')!.value).toBe('TLS Web Server Authentication');
    // The authority key id is the CA's subject key id, not the leaf's own (forge's trap).
    const caSki = extensionText(x509Text(caPath), 'Subject Key Identifier')!.value;
    const leafSki = extensionText(text, 'Subject Key Identifier')!.value;
    expect(extensionText(text, 'Authority Key Identifier')!.value.replace(/^keyid:/, '')).toBe(caSki);
    expect(leafSki).not.toBe(caSki);
    expect(text).toContain('Signature Algorithm: sha256WithRSAEncryption');
  });

  it('defaults to 825 days and a 2048-bit PKCS#8 key; honours --days and --key-size', async () => {
    const s = await issueServerCert(ca, { dns: ['depot.lab.local'] });
    const info = readCertificate(s.certPem);
    expect(info.notAfter.getTime() - info.notBefore.getTime()).toBe(825 * DAY);
    expect(info.key.bits).toBe(2048);
    expect(s.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(new X509Certificate(s.certPem).checkPrivateKey(createPrivateKey(s.keyPem))).toBe(true);
    const t = await issueServerCert(ca, { dns: ['depot.lab.local'], days: 30, keySize: 3072 });
    const tInfo = readCertificate(t.certPem);
    expect(tInfo.notAfter.getTime() - tInfo.notBefore.getTime()).toBe(30 * DAY);
    expect(tInfo.key.bits).toBe(3072);
  });

  it('returns a chain of the leaf then the CA, which openssl verifies', async () => {
    const s = await issueServerCert(ca, { dns: ['depot.lab.local'] });
    expect(splitPemBlocks(s.chainPem)).toEqual([s.certPem, ca.certPem]);
    const chainPath = await save('chain.pem', s.chainPem);
    expect(openssl(['verify', '-x509_strict', '-CAfile', caPath, '-untrusted', chainPath, chainPath]).code).toBe(0);
  });

  it("caps the validity at the CA's end and honours notBefore", async () => {
    const shortCa = await createCa({ keySize: 2048, days: 10 });
    const s = await issueServerCert(shortCa, { dns: ['depot.lab.local'] });
    expect(readCertificate(s.certPem).notAfter).toEqual(readCertificate(shortCa.certPem).notAfter);
    const start = new Date('2030-01-01T00:00:00Z');
    const later = await issueServerCert(ca, { dns: ['depot.lab.local'], notBefore: start, days: 5 });
    expect(readCertificate(later.certPem).notBefore).toEqual(start);
  });

  it('refuses an IP-only certificate unless allowed, then makes one with the IP as CN', async () => {
    await expect(issueServerCert(ca, { dns: [], ips: ['10.0.0.5'] })).rejects.toThrow(
      'Refusing an IP-only certificate: its CN would be an IP address, which the installer rejects.',
    );
    const s = await issueServerCert(ca, { dns: [], ips: ['10.0.0.5'], allowIpOnly: true });
    const info = readCertificate(s.certPem);
    expect(info.commonName).toBe('10.0.0.5');
    expect(info.san).toEqual({ dns: [], ips: ['10.0.0.5'] });
  });

  it.each([
    [{ dns: [] }, /needs at least one DNS name/],
    [{ dns: ['bad_name.lab'] }, /"bad_name\.lab" is not a valid DNS name/],
    [{ dns: ['-lead.lab'] }, /not a valid DNS name/],
    [{ dns: ['a..b'] }, /not a valid DNS name/],
    [{ dns: ['*.com'] }, /not a valid DNS name/],
    [{ dns: ['a.*.lab'] }, /not a valid DNS name/],
    [{ dns: ['10.0.0.5'] }, /^"10\.0\.0\.5" is an IP address, not a DNS name: give it with --ip 10\.0\.0\.5\.$/],
    [{ dns: ['depot.lab.local'], ips: ['10.0.0.256'] }, /"10\.0\.0\.256" is not an IP address/],
    [{ dns: ['depot.lab.local'], days: 0 }, /at least 1, not 0/],
    [{ dns: ['depot.lab.local'], keySize: 1024 }, /not 1024/],
  ])('refuses bad input %j', async (opts, message) => {
    // The words of the error as the command line shows them (the option the library names, as its flag).
    const err = await issueServerCert(ca, opts).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(onTheCommandLine(err?.message)).toMatch(message);
  });

  it('de-duplicates names case-insensitively and keeps their order', async () => {
    const s = await issueServerCert(ca, { dns: ['b.lab', 'B.LAB.', 'a.lab'], ips: ['10.0.0.1', '10.0.0.1'] });
    expect(readCertificate(s.certPem).san).toEqual({ dns: ['b.lab', 'a.lab'], ips: ['10.0.0.1'] });
  });
});

describe('a CA made by openssl', () => {
  it("signs with it: the authority key id is openssl's subject key id and openssl verifies strictly", async () => {
    const keyPath = join(tmp.dir, 'os-ca.key');
    const certPem = opensslRoot(keyPath, '/O=Lab/CN=OpenSSL Root', 30, ['-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    const osCaPath = await save('os-ca.pem', certPem);
    const s = await issueServerCert({ certPem, keyPem: await readFile(keyPath, 'utf8') }, { dns: ['depot.lab.local'] });
    const path = await save('os-leaf.pem', s.certPem);
    expect(openssl(['verify', '-x509_strict', '-CAfile', osCaPath, path]).code).toBe(0);
    expect(extensionText(x509Text(path), 'Authority Key Identifier')!.value.replace(/^keyid:/, '')).toBe(
      extensionText(x509Text(osCaPath), 'Subject Key Identifier')!.value,
    );
    // Capped at the 30-day CA.
    expect(readCertificate(s.certPem).notAfter).toEqual(readCertificate(certPem).notAfter);
  });
});

describe('writeServerDir', () => {
  it('writes key 0600, certificate and chain, LF only, and refuses to overwrite without force', async () => {
    const s = await issueServerCert(ca, { dns: ['depot.lab.local'] });
    const out = join(tmp.dir, 'srv');
    const paths = await writeServerDir(out, s);
    expect((await stat(paths.keyPath)).mode & 0o777).toBe(0o600);
    expect((await stat(paths.certPath)).mode & 0o777).toBe(0o644);
    expect(await readFile(paths.chainPath, 'utf8')).toBe(s.chainPem);
    expect(await readFile(paths.keyPath, 'utf8')).not.toContain('\r');
    await expect(writeServerDir(out, s)).rejects.toThrow(/server-key\.pem already exists/);
    await writeServerDir(out, s, { force: true });
  });

  it('leaves nothing behind when it refuses because one file exists', async () => {
    const s = await issueServerCert(ca, { dns: ['depot.lab.local'] });
    const out = join(tmp.dir, 'partial');
    await writeServerDir(out, s);
    await rm(join(out, 'server-key.pem'));
    const before = await readFile(join(out, 'server-cert.pem'), 'utf8');
    await expect(writeServerDir(out, await issueServerCert(ca, { dns: ['x.lab'] }))).rejects.toThrow(/server-cert\.pem already exists/);
    expect(await readdir(out)).toEqual(['server-cert.pem', 'server-chain.pem']);
    expect(await readFile(join(out, 'server-cert.pem'), 'utf8')).toBe(before);
  });
});
