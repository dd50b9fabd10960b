import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CA_CERT_FILE,
  CA_KEY_FILE,
  SERVER_CERT_FILE,
  SERVER_CHAIN_FILE,
  SERVER_KEY_FILE,
  createCa,
  issueCert,
  signCsrFile,
  writeCaDir,
} from '../../src/cert/index.js';
import { exists, exposedFileWarning } from '../../src/util/fs.js';
import { readSecret } from '../../src/util/secrets.js';
import { customCa } from '../helpers/certs.js';
import { useTempDir } from '../helpers/temp.js';
import { openssl, opensslCsr } from './openssl.js';
import { usageRefusal } from './refusal.js';
import { onTheCommandLine } from './words.js';

// The folder operations the cert commands run (cert ca, issue, sign-csr), in-process; test/cert/cli.test.ts
// keeps what only the command line does.
const HOST = 'depot.lab.local';
const tmp = useTempDir();
let caDir: string;
beforeAll(async () => {
  caDir = join(tmp.dir, 'ca');
  await writeCaDir(caDir, await createCa({ cn: 'Folder CA', days: 30, keySize: 2048 }));
});

/** The sentence `promise` is refused with (exit 2). */
const refusal = async (promise: Promise<unknown>): Promise<string> => (await usageRefusal(promise)).message;

const verifies = (certFile: string): number => openssl(['verify', '-x509_strict', '-CAfile', join(caDir, CA_CERT_FILE), certFile]).code;

describe('writeCaDir: a CA folder', () => {
  it('writes the key 0600, refuses to replace the pair without force, and replaces it with force', async () => {
    const out = join(tmp.dir, 'ca2');
    const ca = await createCa({ keySize: 2048 });
    const paths = await writeCaDir(out, ca);
    expect(paths).toEqual({ keyPath: join(out, CA_KEY_FILE), certPath: join(out, CA_CERT_FILE) });
    expect((await stat(paths.keyPath)).mode & 0o777).toBe(0o600);
    // A key only its owner reads: nothing to warn about.
    expect(await exposedFileWarning(paths.keyPath)).toBeUndefined();
    expect(await refusal(writeCaDir(out, ca))).toBe(`${paths.keyPath} already exists.`);
    await writeCaDir(out, await createCa({ keySize: 2048 }), { force: true });
    expect(await readFile(paths.certPath, 'utf8')).not.toBe(ca.certPem);
  });

  it('warns of a CA key others can read, naming the chmod that ends it', async () => {
    const exposed = join(tmp.dir, 'exposed-ca');
    await writeCaDir(exposed, await createCa({ keySize: 2048 }));
    const key = join(exposed, CA_KEY_FILE);
    await chmod(key, 0o644);
    expect(await exposedFileWarning(key)).toBe(`${key} is readable by others (mode 0644); run chmod 600 ${key}.`);
  });

  it('encrypts the key with a passphrase; issuing needs it, and a wrong one or an unset variable is one sentence', async () => {
    const enc = join(tmp.dir, 'enc-ca');
    await writeCaDir(enc, await createCa({ keySize: 2048 }), { passphrase: 'lab passphrase' });
    expect(await readFile(join(enc, CA_KEY_FILE), 'utf8')).toContain('ENCRYPTED PRIVATE KEY');
    expect(await refusal(issueCert(join(tmp.dir, 'e1'), { caDir: enc, dns: [HOST] }))).toMatch(/ca-key\.pem is encrypted and no passphrase was given\./);
    const issued = await issueCert(join(tmp.dir, 'e1'), { caDir: enc, caPassphrase: 'lab passphrase', dns: [HOST] });
    expect(issued.certificate.commonName).toBe(HOST);
    expect(await refusal(issueCert(join(tmp.dir, 'e2'), { caDir: enc, caPassphrase: 'nope', dns: [HOST] }))).toMatch(
      /cannot be decrypted with the given passphrase/,
    );
    expect(await exists(join(tmp.dir, 'e2'))).toBe(false);
    expect(await refusal(readSecret({ env: 'UNSET_DEPOTKIT_VAR' }, 'CA key passphrase'))).toMatch(
      /UNSET_DEPOTKIT_VAR that should hold the CA key passphrase is not set/,
    );
  });
});

describe('issueCert: a server certificate into a folder', () => {
  it('writes the key 0600, the certificate and the chain, and says what the caller should know of the result', async () => {
    const long = `${'a'.repeat(60)}.lab.local`;
    const issued = await issueCert(join(tmp.dir, 'server'), { caDir, dns: [long, 'depot'], keySize: 2048 });
    expect((await stat(issued.keyPath)).mode & 0o777).toBe(0o600);
    expect(issued.certificate.san.dns).toEqual([long, 'depot']);
    // The CA ends in 30 days, the first name cannot be the CN: both said, in the library's words.
    expect(issued.warnings).toHaveLength(2);
    expect(issued.warnings[0]).toMatch(/^the CA expires on .*, so the certificate ends then instead of after 825 days\.$/);
    expect(issued.warnings[1]).toContain('so the CN is depot');
    await expect(issueCert(join(tmp.dir, 'server'), { caDir, dns: ['depot'] })).rejects.toThrow(/server-key\.pem already exists/);
  });

  it('writes a chain of the leaf then the CA that openssl verifies strictly, with the first DNS name as CN', async () => {
    const srv = join(tmp.dir, 'srv');
    await issueCert(srv, { caDir, dns: [HOST, 'depot'], ips: ['10.0.0.5'] });
    expect(verifies(join(srv, SERVER_CERT_FILE))).toBe(0);
    const chain = await readFile(join(srv, SERVER_CHAIN_FILE), 'utf8');
    expect(chain).toBe((await readFile(join(srv, SERVER_CERT_FILE), 'utf8')) + (await readFile(join(caDir, CA_CERT_FILE), 'utf8')));
    expect(openssl(['x509', '-in', join(srv, SERVER_CERT_FILE), '-noout', '-subject']).stdout.trim()).toBe(`subject=CN = ${HOST}`);
  });

  it('refuses an IP-only certificate unless allowIpOnly, and then warns', async () => {
    const out = join(tmp.dir, 'ip');
    expect(await refusal(issueCert(out, { caDir, ips: ['10.0.0.5'], dns: [] }))).toMatch(
      /^Refusing an IP-only certificate: its CN would be an IP address, which the installer rejects\./,
    );
    const ok = await issueCert(out, { caDir, ips: ['10.0.0.5'], dns: [], allowIpOnly: true });
    expect(ok.warnings).toContain('the certificate has no DNS name and its CN is the IP 10.0.0.5: the installer will reject it.');
  });

  it('refuses a missing CA folder, a bad DNS name, a server folder given as the CA and a CA whose dates cannot be read, writing nothing', async () => {
    const out = join(tmp.dir, 'never');
    const nowhere = join(tmp.dir, 'nowhere');
    expect(await refusal(issueCert(out, { caDir: nowhere, dns: [HOST] }))).toBe(
      `${join(nowhere, CA_CERT_FILE)} does not exist; ${nowhere} is not a CA folder.`,
    );
    expect(await refusal(issueCert(out, { caDir, dns: ['bad_name'] }))).toMatch(/"bad_name" is not a valid DNS name/);
    const srv = join(tmp.dir, 'srv-as-ca');
    await issueCert(srv, { caDir, dns: [HOST] });
    await writeFile(join(srv, CA_CERT_FILE), await readFile(join(srv, SERVER_CERT_FILE)));
    await writeFile(join(srv, CA_KEY_FILE), await readFile(join(srv, SERVER_KEY_FILE)));
    expect(await refusal(issueCert(out, { caDir: srv, dns: [HOST] }))).toMatch(/\(CN=depot\.lab\.local\) is not a CA certificate/);
    const broken = customCa({ notAfter: new Date(Date.UTC(10240, 0, 1)) });
    const brokenDir = join(tmp.dir, 'broken-ca');
    await mkdir(brokenDir);
    await writeFile(join(brokenDir, CA_CERT_FILE), broken.certPem);
    await writeFile(join(brokenDir, CA_KEY_FILE), broken.keyPem, { mode: 0o600 });
    expect(await refusal(issueCert(out, { caDir: brokenDir, dns: [HOST] }))).toMatch(/has a validity date that cannot be read/);
    expect(await exists(out)).toBe(false);
  });
});

describe('signCsrFile: a request signed into a file', () => {
  it('signs an openssl req CSR that openssl verifies, and refuses to replace the file', async () => {
    const { csrPath } = opensslCsr(tmp.dir, 'vc', '/CN=vc.lab.local', ['-addext', 'subjectAltName=DNS:vc.lab.local']);
    const out = join(tmp.dir, 'vc.pem');
    const signed = await signCsrFile(csrPath, out, { caDir, days: 10 });
    expect(signed.certificate.san).toEqual({ dns: ['vc.lab.local'], ips: [] });
    expect(verifies(out)).toBe(0);
    expect(await refusal(signCsrFile(csrPath, out, { caDir }))).toMatch(/vc\.pem already exists/);
  });

  it('refuses a CSR without SANs unless allowNoSan, one with a bad signature, and a missing file', async () => {
    const { csrPath } = opensslCsr(tmp.dir, 'nosan', '/CN=old.lab.local');
    const out = join(tmp.dir, 'nosan.pem');
    expect(await refusal(signCsrFile(csrPath, out, { caDir }))).toMatch(/requests no subject alternative names/);
    expect((await signCsrFile(csrPath, out, { caDir, allowNoSan: true })).certificate.san.dns).toEqual(['old.lab.local']);
    const body = (await readFile(csrPath, 'utf8')).split('\n').slice(1, -2).join('');
    const bytes = Buffer.from(body, 'base64');
    bytes[bytes.indexOf('old.lab.local')] = 'x'.charCodeAt(0);
    const tampered = join(tmp.dir, 'tampered.csr');
    await writeFile(tampered, `-----BEGIN CERTIFICATE REQUEST-----\r\n${bytes.toString('base64')}\r\n-----END CERTIFICATE REQUEST-----\r\n`);
    expect(await refusal(signCsrFile(tampered, join(tmp.dir, 't.pem'), { caDir }))).toMatch(/^The CSR's signature does not verify/);
    expect(await refusal(signCsrFile(join(tmp.dir, 'none.csr'), join(tmp.dir, 't.pem'), { caDir }))).toMatch(/none\.csr does not exist/);
  });

  it("applies the server profile's refusals: a 1024-bit key, and a CN that is an IP unless allowIpOnly, then warns", async () => {
    const weak = opensslCsr(tmp.dir, 'weak', '/CN=10.0.0.5', ['-addext', 'subjectAltName=IP:10.0.0.5'], ['-newkey', 'rsa:1024']);
    const weakOut = join(tmp.dir, 'weak.pem');
    expect(await refusal(signCsrFile(weak.csrPath, weakOut, { caDir, allowIpOnly: true }))).toMatch(
      /^The CSR's RSA key has 1024 bits; the installer requires at least 2048\./,
    );
    expect(await exists(weakOut)).toBe(false);
    const ip = opensslCsr(tmp.dir, 'ip', '/CN=10.0.0.6', ['-addext', 'subjectAltName=IP:10.0.0.6']);
    const ipOut = join(tmp.dir, 'ip-signed.pem');
    expect(onTheCommandLine(await refusal(signCsrFile(ip.csrPath, ipOut, { caDir })))).toMatch(
      /^Refusing to sign the CSR: its CN is an IP address \(10\.0\.0\.6\), which the installer rejects\./,
    );
    expect(await exists(ipOut)).toBe(false);
    const ok = await signCsrFile(ip.csrPath, ipOut, { caDir, allowIpOnly: true });
    expect(ok.warnings).toContain('the certificate has no DNS name and its CN is the IP 10.0.0.6: the installer will reject it.');
    expect(verifies(ipOut)).toBe(0);
    const mixed = opensslCsr(tmp.dir, 'mixed', '/CN=10.0.0.6', ['-addext', 'subjectAltName=DNS:mixed.lab.local']);
    const mixedOk = await signCsrFile(mixed.csrPath, join(tmp.dir, 'mixed.pem'), { caDir, allowIpOnly: true });
    expect(mixedOk.warnings).toContain('the certificate has the IP 10.0.0.6 as its CN: the installer will reject it.');
  });
});
