import { createPublicKey } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCa, generateCsr, generateKeyPem, readCertificate, parsePemBlocks, signCsr, type CaMaterial } from '../../src/cert/index.js';
import { encodePem } from '../../src/cert/pem.js';
import { pooledKeyPem } from '../helpers/key-pool.js';
import { useTempDir } from '../helpers/temp.js';
import { extensionText, openssl, opensslCsr as csrByOpenssl, x509Text } from './openssl.js';
import { usageRefusal } from './refusal.js';
import { onTheCommandLine } from './words.js';

const DAY = 86_400_000;
const tmp = useTempDir();
let ca: CaMaterial;
let caPath: string;
beforeAll(async () => {
  ca = await createCa({ cn: 'Zürich Lab CA', keySize: 2048 });
  caPath = join(tmp.dir, 'ca.pem');
  await writeFile(caPath, ca.certPem);
});

/** openssl req's CSR of `subject`; its key one of the suite's pooled 2048-bit keys unless `keyAlg` says otherwise. */
function opensslCsr(name: string, subject: string, extra?: string[], keyAlg?: string[]) {
  if (!keyAlg) {
    const pooled = join(tmp.dir, `${name}.pool.key`);
    writeFileSync(pooled, pooledKeyPem(2048), { mode: 0o600 });
    keyAlg = ['-key', pooled];
  }
  return csrByOpenssl(tmp.dir, name, subject, extra, keyAlg);
}

const signError = (csrPem: string, opts = {}) => usageRefusal(signCsr(ca, csrPem, opts));

describe('signCsr', () => {
  it('signs a CSR from openssl req: subject and SANs copied, server profile, 730 days, verified strictly by openssl', async () => {
    const { csrPath, pem } = opensslCsr('vc', '/C=DE/ST=Zürich/L=Palo Alto/O=Lab Ltd/OU=IT/CN=vc.lab.local', [
      '-addext',
      'subjectAltName=DNS:vc.lab.local,DNS:vc,IP:10.0.0.9',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
    ]);
    const certPem = await signCsr(ca, pem.replace(/\n/g, '\r\n'));
    const certPath = join(tmp.dir, 'vc.pem');
    await writeFile(certPath, certPem);
    expect(openssl(['verify', '-x509_strict', '-purpose', 'sslserver', '-CAfile', caPath, certPath]).code).toBe(0);
    const text = x509Text(certPath);
    expect(openssl(['x509', '-in', certPath, '-noout', '-subject', '-nameopt', 'RFC2253,-esc_msb']).stdout.trim()).toBe(
      openssl(['req', '-in', csrPath, '-noout', '-subject', '-nameopt', 'RFC2253,-esc_msb']).stdout.trim(),
    );
    // UTF-8 encoded once (forge alone would encode the copied bytes twice).
    expect(text).toContain('Subject: C = DE, ST = Z\\C3\\BCrich, L = Palo Alto');
    expect(text).toContain('Issuer: CN = Z\\C3\\BCrich Lab CA');
    expect(extensionText(text, 'Subject Alternative Name')!.value).toBe('DNS:vc.lab.local, DNS:vc, IP Address:10.0.0.9');
    // The requested CA:TRUE is not copied: the server profile applies.
    expect(extensionText(text, 'Basic Constraints')!.value).toBe('CA:FALSE');
    expect(extensionText(text, 'Key Usage')!.value).toBe('Digital Signature, Key Encipherment');
    expect(extensionText(text, 'Extended Key Usage')!.value).toBe('TLS Web Server Authentication');
    const info = readCertificate(certPem);
    expect(info.notAfter.getTime() - info.notBefore.getTime()).toBe(730 * DAY);
    // The issuer (a UTF-8 name) is the CA's subject byte for byte.
    expect(info.issuer).toBe('CN=Zürich Lab CA');
    const csrKey = createPublicKey(openssl(['req', '-in', csrPath, '-noout', '-pubkey']).stdout).export({ format: 'der', type: 'spki' });
    expect(readCertificate(certPem).publicKey.export({ format: 'der', type: 'spki' })).toEqual(csrKey);
  });

  it('honours --days', async () => {
    const { pem } = opensslCsr('days', '/CN=days.lab.local', ['-addext', 'subjectAltName=DNS:days.lab.local']);
    const info = readCertificate(await signCsr(ca, pem, { days: 90 }));
    expect(info.notAfter.getTime() - info.notBefore.getTime()).toBe(90 * DAY);
  });

  it('refuses a CSR whose self-signature does not verify', async () => {
    const { pem } = opensslCsr('tamper', '/CN=vc.lab.local', ['-addext', 'subjectAltName=DNS:vc.lab.local']);
    const [block] = parsePemBlocks(pem);
    const der = Buffer.from(block!.der);
    const at = der.indexOf('vc.lab.local');
    der[at] = 'x'.charCodeAt(0);
    const err = await signError(encodePem('CERTIFICATE REQUEST', der));
    expect(err.message).toBe("The CSR's signature does not verify: the request was altered or not signed by its own key.");
  });

  it('refuses a CSR without SANs unless allowed, then uses its CN as the SAN', async () => {
    const { pem } = opensslCsr('nosan', '/O=Lab/CN=legacy.lab.local');
    const err = await signError(pem);
    expect(err.message).toBe('The CSR for legacy.lab.local requests no subject alternative names; the installer matches host names against the SAN only.');
    expect(onTheCommandLine(err.fix)).toMatch(/--allow-no-san/);
    const info = readCertificate(await signCsr(ca, pem, { allowNoSan: true }));
    expect(info.san).toEqual({ dns: ['legacy.lab.local'], ips: [] });
    expect(info.subject).toBe('O=Lab, CN=legacy.lab.local');
  });

  it('signs a CSR with an empty subject, making its SAN critical as RFC 5280 requires; refuses one naming nothing', async () => {
    const { pem } = opensslCsr('nosubject', '/', ['-addext', 'subjectAltName=DNS:bare.lab.local']);
    const certPem = await signCsr(ca, pem);
    const path = join(tmp.dir, 'nosubject.pem');
    await writeFile(path, certPem);
    expect(openssl(['verify', '-x509_strict', '-CAfile', caPath, path]).code).toBe(0);
    expect(extensionText(x509Text(path), 'Subject Alternative Name')!.header).toBe('X509v3 Subject Alternative Name: critical');
    const empty = opensslCsr('nothing', '/');
    expect((await signError(empty.pem, { allowNoSan: true })).message).toBe(
      'The CSR names nothing: its subject is empty and it requests no subject alternative names.',
    );
  });

  it('refuses an RSA key under 2048 bits, as the installer does (also when the CN is an IP)', async () => {
    const weak = opensslCsr('weak', '/CN=10.0.0.5', ['-addext', 'subjectAltName=IP:10.0.0.5'], ['-newkey', 'rsa:1024']);
    const err = await signError(weak.pem, { allowIpOnly: true });
    expect(err.message).toBe("The CSR's RSA key has 1024 bits; the installer requires at least 2048.");
    const fine = opensslCsr('fine', '/CN=fine.lab.local', ['-addext', 'subjectAltName=DNS:fine.lab.local']);
    expect(readCertificate(await signCsr(ca, fine.pem)).key.bits).toBe(2048);
  });

  it('refuses a CSR whose CN is an IP unless allowIpOnly, even with a DNS SAN', async () => {
    const { pem } = opensslCsr('cnip', '/CN=10.0.0.7', ['-addext', 'subjectAltName=DNS:vc7.lab.local,IP:10.0.0.7']);
    const err = await signError(pem);
    expect(err.message).toBe('Refusing to sign the CSR: its CN is an IP address (10.0.0.7), which the installer rejects.');
    expect(onTheCommandLine(err.fix)).toMatch(/--allow-ip-only/);
    const certPem = await signCsr(ca, pem, { allowIpOnly: true });
    const path = join(tmp.dir, 'cnip.pem');
    await writeFile(path, certPem);
    expect(openssl(['verify', '-x509_strict', '-CAfile', caPath, path]).code).toBe(0);
    expect(readCertificate(certPem).commonName).toBe('10.0.0.7');
  });

  it('refuses a CSR whose only names are IPs unless allowIpOnly, also when --allow-no-san turns an IP CN into the SAN', async () => {
    const ipSan = opensslCsr('ipsan', '/O=Lab', ['-addext', 'subjectAltName=IP:10.0.0.8,IP:fd00::8']);
    expect((await signError(ipSan.pem)).message).toBe(
      'Refusing to sign an IP-only CSR (IP:10.0.0.8, IP:fd00::8): it names no DNS host, which the installer rejects.',
    );
    expect(readCertificate(await signCsr(ca, ipSan.pem, { allowIpOnly: true })).san).toEqual({ dns: [], ips: ['10.0.0.8', 'fd00::8'] });
    const ipCn = opensslCsr('ipcn', '/CN=10.0.0.9');
    expect((await signError(ipCn.pem, { allowNoSan: true })).message).toMatch(/its CN is an IP address \(10\.0\.0\.9\)/);
    expect(readCertificate(await signCsr(ca, ipCn.pem, { allowNoSan: true, allowIpOnly: true })).san).toEqual({ dns: [], ips: ['10.0.0.9'] });
  });

  it('refuses malformed input, a non-CSR and a non-RSA request', async () => {
    expect((await signError('-----BEGIN CERTIFICATE REQUEST-----\nQUJD\n')).message).toMatch(/malformed: the CERTIFICATE REQUEST block has no END line/);
    expect((await signError(ca.certPem)).message).toBe('The CSR holds no CERTIFICATE REQUEST PEM block.');
    expect((await signError(encodePem('CERTIFICATE REQUEST', Buffer.from('not der at all')))).message).toMatch(/not a readable PKCS#10 request/);
    const { pem } = opensslCsr(
      'ec',
      '/CN=ec.lab.local',
      ['-addext', 'subjectAltName=DNS:ec.lab.local'],
      ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'],
    );
    expect((await signError(pem)).message).toMatch(/key is not RSA/);
  });
});

describe('generateCsr', () => {
  it("makes a PKCS#10 request openssl verifies, with the management server's fields and SANs", async () => {
    const keyPem = await generateKeyPem(2048);
    const csr = generateCsr({
      keyPem,
      commonName: 'vcenter.lab.local',
      dns: ['vcenter.lab.local'],
      ips: ['10.0.0.10'],
      country: 'us',
      state: 'California',
      locality: 'Palo Alto',
      organization: 'Lab',
      organizationUnit: '',
      email: 'admin@lab.local',
    });
    expect(csr).toMatch(/^-----BEGIN CERTIFICATE REQUEST-----\n[\s\S]+-----END CERTIFICATE REQUEST-----\n$/);
    expect(csr).not.toContain('\r');
    const path = join(tmp.dir, 'gen.csr');
    await writeFile(path, csr);
    const r = openssl(['req', '-in', path, '-verify', '-noout', '-text', '-nameopt', 'RFC2253']);
    expect(r.stdout + r.stderr).toMatch(/verify OK/i);
    expect(r.stdout).toContain('Subject: emailAddress=admin@lab.local,CN=vcenter.lab.local,O=Lab,L=Palo Alto,ST=California,C=US');
    expect(r.stdout).toContain('DNS:vcenter.lab.local, IP Address:10.0.0.10');
    // And our signer takes it.
    const info = readCertificate(await signCsr(ca, csr));
    expect(info.commonName).toBe('vcenter.lab.local');
    expect(info.san.ips).toEqual(['10.0.0.10']);
  });

  it('refuses a bad country, an empty CN and a non-RSA or encrypted key', async () => {
    const keyPem = await generateKeyPem(2048);
    expect(() => generateCsr({ keyPem, commonName: 'x.lab', country: 'USA' })).toThrow(/two-letter code/);
    expect(() => generateCsr({ keyPem, commonName: ' ' })).toThrow(/must not be empty/);
    const ec = openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']).stdout;
    expect(() => generateCsr({ keyPem: ec, commonName: 'x.lab' })).toThrow(/RSA keys only/);
    const keyPath = join(tmp.dir, 'k.pem');
    await writeFile(keyPath, keyPem);
    const enc = openssl(['pkey', '-in', keyPath, '-aes256', '-passout', 'pass:x']).stdout;
    expect(() => generateCsr({ keyPem: enc, commonName: 'x.lab' })).toThrow(/is encrypted and no passphrase was given/);
  });
});
