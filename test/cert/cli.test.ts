import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CA_CERT_FILE, CA_KEY_FILE, SERVER_CERT_FILE, SERVER_CHAIN_FILE, SERVER_KEY_FILE } from '../../src/cert/files.js';
import { exists } from '../../src/util/fs.js';
import { brokenServerCert, customCa } from '../helpers/certs.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { openssl } from './openssl.js';

const HOST = 'depot.lab.local';
let dir: string;
let cleanup: () => Promise<void>;
let caDir: string;
let srvDir: string;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  caDir = join(dir, 'ca');
  srvDir = join(dir, 'srv');
  const ca = await runCli(['cert', 'ca', '--out', caDir, '--cn', 'CLI Lab CA', '--key-size', '2048', '--days', '365']);
  expect(ca.code, ca.stderr).toBe(0);
  const issue = await runCli(['cert', 'issue', '--ca', caDir, '--dns', HOST, '--dns', 'depot', '--ip', '10.0.0.5', '--out', srvDir]);
  expect(issue.code, issue.stderr).toBe(0);
});
afterAll(() => cleanup());

/** Bad input: exit 2, one sentence (plus an optional hint), no stack trace. */
function expectUsageError(r: CliResult, message: RegExp): void {
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.stdout).toBe('');
}

describe('depotkit cert ca / issue', () => {
  it('writes the CA and server folders with private keys 0600, and openssl verifies the result strictly', async () => {
    expect((await stat(join(caDir, CA_KEY_FILE))).mode & 0o777).toBe(0o600);
    expect((await stat(join(srvDir, SERVER_KEY_FILE))).mode & 0o777).toBe(0o600);
    const v = openssl(['verify', '-x509_strict', '-CAfile', join(caDir, CA_CERT_FILE), join(srvDir, SERVER_CERT_FILE)]);
    expect(v.code, v.stderr).toBe(0);
    const chain = await readFile(join(srvDir, SERVER_CHAIN_FILE), 'utf8');
    expect(chain).toBe((await readFile(join(srvDir, SERVER_CERT_FILE), 'utf8')) + (await readFile(join(caDir, CA_CERT_FILE), 'utf8')));
    expect(openssl(['x509', '-in', join(srvDir, SERVER_CERT_FILE), '-noout', '-subject']).stdout.trim()).toBe(`subject=CN = ${HOST}`);
  });

  it('prints JSON with --json and refuses to overwrite without --force', async () => {
    const out = join(dir, 'ca2');
    const r = await runCli(['cert', 'ca', '--out', out, '--key-size', '2048', '--json']);
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json).toMatchObject({
      keyPath: join(out, CA_KEY_FILE),
      certPath: join(out, CA_CERT_FILE),
      certificate: { isCa: true, pathLen: 0, subject: 'CN=depotkit private CA' },
    });
    expect(r.stdout).not.toContain('PRIVATE KEY');
    expectUsageError(await runCli(['cert', 'ca', '--out', out, '--key-size', '2048']), /ca-key\.pem already exists\.\n {2}Use --force to replace it\./);
    expect((await runCli(['cert', 'ca', '--out', out, '--key-size', '2048', '--force'])).code).toBe(0);
    const again = await runCli(['cert', 'issue', '--ca', caDir, '--dns', HOST, '--out', srvDir]);
    expectUsageError(again, /server-key\.pem already exists/);
  });

  it('refuses an IP-only certificate unless --allow-ip-only, and then warns', async () => {
    expectUsageError(
      await runCli(['cert', 'issue', '--ca', caDir, '--ip', '10.0.0.5', '--out', join(dir, 'ip')]),
      /^depotkit: Refusing an IP-only certificate: its CN would be an IP address, which the installer rejects\./,
    );
    const ok = await runCli(['cert', 'issue', '--ca', caDir, '--ip', '10.0.0.5', '--out', join(dir, 'ip'), '--allow-ip-only']);
    expect(ok.code).toBe(0);
    expect(ok.stderr).toMatch(/warning: the certificate has no DNS name and its CN is the IP 10\.0\.0\.5: the installer will reject it\./);
  });

  it('encrypts the CA key with --passphrase-file and needs the passphrase to issue', async () => {
    const secret = join(dir, 'pass.txt');
    await writeFile(secret, 'lab passphrase\n');
    const enc = join(dir, 'enc-ca');
    const made = await runCli(['cert', 'ca', '--out', enc, '--key-size', '2048', '--passphrase-file', secret]);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).not.toContain('lab passphrase');
    expect(await readFile(join(enc, CA_KEY_FILE), 'utf8')).toContain('ENCRYPTED PRIVATE KEY');
    expectUsageError(
      await runCli(['cert', 'issue', '--ca', enc, '--dns', HOST, '--out', join(dir, 'e1')]),
      /ca-key\.pem is encrypted and no passphrase was given\./,
    );
    const ok = await runCli(['cert', 'issue', '--ca', enc, '--dns', HOST, '--out', join(dir, 'e1'), '--ca-passphrase-env', 'LAB_CA_PASS'], {
      env: { LAB_CA_PASS: 'lab passphrase' },
    });
    expect(ok.code, ok.stderr).toBe(0);
    expectUsageError(
      await runCli(['cert', 'issue', '--ca', enc, '--dns', HOST, '--out', join(dir, 'e2'), '--ca-passphrase-env', 'LAB_CA_PASS'], {
        env: { LAB_CA_PASS: 'nope' },
      }),
      /cannot be decrypted with the given passphrase/,
    );
    expectUsageError(
      await runCli(['cert', 'issue', '--ca', enc, '--dns', HOST, '--out', join(dir, 'e2'), '--ca-passphrase-env', 'UNSET_DEPOTKIT_VAR']),
      /UNSET_DEPOTKIT_VAR that should hold the CA key passphrase is not set/,
    );
  });

  it('warns when the CA ends before the requested validity', async () => {
    const r = await runCli(['cert', 'issue', '--ca', caDir, '--dns', HOST, '--out', join(dir, 'capped'), '--days', '825']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/warning: the CA expires on .* so the certificate ends then instead of after 825 days\./);
    expect(r.stderr).not.toContain('readable by others');
  });

  it('warns when the CA key is readable by others', async () => {
    const exposed = join(dir, 'exposed-ca');
    expect((await runCli(['cert', 'ca', '--out', exposed, '--key-size', '2048'])).code).toBe(0);
    await chmod(join(exposed, CA_KEY_FILE), 0o644);
    const r = await runCli(['cert', 'issue', '--ca', exposed, '--dns', HOST, '--out', join(dir, 'exposed-srv')]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`warning: ${join(exposed, CA_KEY_FILE)} is readable by others (mode 0644); run chmod 600 ${join(exposed, CA_KEY_FILE)}.`);
  });

  it('refuses a --days that ends after 9999 before writing anything, and a CA whose dates cannot be read', async () => {
    const out = join(dir, 'forever-ca');
    expectUsageError(
      await runCli(['cert', 'ca', '--out', out, '--key-size', '2048', '--days', '3000000']),
      /^depotkit: A validity of 3000000 days would end after 9999-12-31T23:59:59Z, the latest date a certificate can hold\.\n$/,
    );
    expect(await exists(out)).toBe(false);
    const broken = customCa({ notAfter: new Date(Date.UTC(10240, 0, 1)) });
    const brokenDir = join(dir, 'broken-ca');
    await mkdir(brokenDir);
    await writeFile(join(brokenDir, CA_CERT_FILE), broken.certPem);
    await writeFile(join(brokenDir, CA_KEY_FILE), broken.keyPem, { mode: 0o600 });
    const leafDir = join(dir, 'from-broken');
    expectUsageError(await runCli(['cert', 'issue', '--ca', brokenDir, '--dns', HOST, '--out', leafDir]), /has a validity date that cannot be read/);
    expect(await exists(leafDir)).toBe(false);
  });

  // Independent processes: run them side by side.
  it.concurrent.each([
    [['cert', 'ca', '--out', 'x', '--key-size', '1000'], /--key-size must be one of 2048, 3072, 4096, not "1000"/],
    [['cert', 'ca', '--out', 'x', '--days', 'ten'], /--days takes a whole number, not "ten"/],
    [['cert', 'ca', '--out', 'x', '--days', '0'], /--days must be at least 1/],
    [['cert', 'issue', '--ca', 'nowhere', '--dns', HOST, '--out', 'x'], /nowhere\/ca-cert\.pem does not exist; nowhere is not a CA folder\./],
    [['cert', 'issue', '--ca', 'ca', '--dns', 'bad_name', '--out', 'x'], /"bad_name" is not a valid DNS name/],
    [['cert', 'inspect', 'missing.pem'], /missing\.pem does not exist/],
  ])('exits 2 with one sentence for %j', async (args, message) => {
    expectUsageError(await runCli(args, { cwd: dir }), message);
  });

  it('refuses a server folder given as the CA', async () => {
    await writeFile(join(srvDir, CA_CERT_FILE), await readFile(join(srvDir, SERVER_CERT_FILE)));
    await writeFile(join(srvDir, CA_KEY_FILE), await readFile(join(srvDir, SERVER_KEY_FILE)));
    expectUsageError(
      await runCli(['cert', 'issue', '--ca', srvDir, '--dns', HOST, '--out', join(dir, 'x')]),
      /\(CN=depot\.lab\.local\) is not a CA certificate/,
    );
  });
});

describe('depotkit cert sign-csr', () => {
  it('signs an openssl req CSR for 730 days; openssl verifies it', async () => {
    const csr = join(dir, 'vc.csr');
    expect(
      openssl([
        'req',
        '-new',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'vc.key'),
        '-out',
        csr,
        '-subj',
        '/CN=vc.lab.local',
        '-addext',
        'subjectAltName=DNS:vc.lab.local',
      ]).code,
    ).toBe(0);
    const out = join(dir, 'vc.pem');
    const r = await runCli(['cert', 'sign-csr', '--ca', caDir, '--csr', csr, '--out', out, '--days', '100', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).certificate.san).toEqual({ dns: ['vc.lab.local'], ips: [] });
    expect(openssl(['verify', '-x509_strict', '-CAfile', join(caDir, CA_CERT_FILE), out]).code).toBe(0);
    expectUsageError(await runCli(['cert', 'sign-csr', '--ca', caDir, '--csr', csr, '--out', out]), /vc\.pem already exists/);
  });

  it('refuses a CSR with a bad signature, one without SANs, and a missing file', async () => {
    const csr = join(dir, 'nosan.csr');
    expect(openssl(['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'nosan.key'), '-out', csr, '-subj', '/CN=old.lab.local']).code).toBe(
      0,
    );
    expectUsageError(await runCli(['cert', 'sign-csr', '--ca', caDir, '--csr', csr, '--out', join(dir, 'nosan.pem')]), /requests no subject alternative names/);
    const ok = await runCli(['cert', 'sign-csr', '--ca', caDir, '--csr', csr, '--out', join(dir, 'nosan.pem'), '--allow-no-san']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('SAN:     DNS:old.lab.local');
    const body = (await readFile(csr, 'utf8')).split('\n').slice(1, -2).join('');
    const bytes = Buffer.from(body, 'base64');
    bytes[bytes.indexOf('old.lab.local')] = 'x'.charCodeAt(0);
    const tampered = join(dir, 'tampered.csr');
    await writeFile(tampered, `-----BEGIN CERTIFICATE REQUEST-----\r\n${bytes.toString('base64')}\r\n-----END CERTIFICATE REQUEST-----\r\n`);
    expectUsageError(
      await runCli(['cert', 'sign-csr', '--ca', caDir, '--csr', tampered, '--out', join(dir, 't.pem')]),
      /^depotkit: The CSR's signature does not verify/,
    );
    expectUsageError(
      await runCli(['cert', 'sign-csr', '--ca', caDir, '--csr', join(dir, 'none.csr'), '--out', join(dir, 't.pem')]),
      /none\.csr does not exist/,
    );
  });

  it("applies the server profile's refusals: a 1024-bit key, and a CN that is an IP unless --allow-ip-only, then warns", async () => {
    const weak = join(dir, 'weak.csr');
    expect(
      openssl([
        'req',
        '-new',
        '-newkey',
        'rsa:1024',
        '-nodes',
        '-keyout',
        join(dir, 'weak.key'),
        '-out',
        weak,
        '-subj',
        '/CN=10.0.0.5',
        '-addext',
        'subjectAltName=IP:10.0.0.5',
      ]).code,
    ).toBe(0);
    const weakOut = join(dir, 'weak.pem');
    expectUsageError(
      await runCli(['cert', 'sign-csr', '--ca', caDir, '--csr', weak, '--out', weakOut, '--allow-ip-only']),
      /^depotkit: The CSR's RSA key has 1024 bits; the installer requires at least 2048\./,
    );
    expect(await exists(weakOut)).toBe(false);
    const ipCsr = join(dir, 'ip.csr');
    expect(
      openssl([
        'req',
        '-new',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'ip.key'),
        '-out',
        ipCsr,
        '-subj',
        '/CN=10.0.0.6',
        '-addext',
        'subjectAltName=IP:10.0.0.6',
      ]).code,
    ).toBe(0);
    const ipOut = join(dir, 'ip-signed.pem');
    expectUsageError(
      await runCli(['cert', 'sign-csr', '--ca', caDir, '--csr', ipCsr, '--out', ipOut]),
      /^depotkit: Refusing to sign the CSR: its CN is an IP address \(10\.0\.0\.6\), which the installer rejects\./,
    );
    expect(await exists(ipOut)).toBe(false);
    const ok = await runCli(['cert', 'sign-csr', '--ca', caDir, '--csr', ipCsr, '--out', ipOut, '--allow-ip-only']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toContain('warning: the certificate has no DNS name and its CN is the IP 10.0.0.6: the installer will reject it.');
    expect(openssl(['verify', '-x509_strict', '-CAfile', join(caDir, CA_CERT_FILE), ipOut]).code).toBe(0);
    const mixedCsr = join(dir, 'mixed.csr');
    expect(
      openssl([
        'req',
        '-new',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'mixed.key'),
        '-out',
        mixedCsr,
        '-subj',
        '/CN=10.0.0.6',
        '-addext',
        'subjectAltName=DNS:mixed.lab.local',
      ]).code,
    ).toBe(0);
    const mixed = await runCli(['cert', 'sign-csr', '--ca', caDir, '--csr', mixedCsr, '--out', join(dir, 'mixed.pem'), '--allow-ip-only']);
    expect(mixed.code, mixed.stderr).toBe(0);
    expect(mixed.stderr).toContain('warning: the certificate has the IP 10.0.0.6 as its CN: the installer will reject it.');
  });
});

describe('depotkit cert inspect', () => {
  it('shows the certificate and lints it: exit 0 when fit for the host', async () => {
    // --ca takes the CA folder as well as its certificate file.
    const r = await runCli(['cert', 'inspect', join(srvDir, SERVER_CHAIN_FILE), '--host', HOST, '--ca', caDir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Subject:      CN=${HOST}`);
    expect(r.stdout).toContain('SAN:          DNS:depot.lab.local, DNS:depot, IP:10.0.0.5');
    expect(r.stdout).toContain('Chain certificate 1:');
    expect(r.stdout).toContain(`Lint: no problems for ${HOST}.`);
  });

  it('exits 1 with findings and the fix command when the certificate is wrong for the host', async () => {
    const r = await runCli(['cert', 'inspect', join(srvDir, SERVER_CERT_FILE), '--host', 'other.lab.local', '--json']);
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout);
    expect(json.ok).toBe(false);
    expect(json.findings[0]).toMatchObject({ id: 'cert.san.host-missing', severity: 'error' });
    expect(json.findings[0].fix).toBe(
      'Issue a new certificate: depotkit cert issue --ca <ca-dir> --dns other.lab.local --dns depot.lab.local --dns depot --ip 10.0.0.5 --out <out-dir>',
    );
    expect(json.certificate.fingerprints.sha256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    // Given the CA folder, the fix names it.
    const withDir = await runCli(['cert', 'inspect', join(srvDir, SERVER_CERT_FILE), '--host', 'other.lab.local', '--ca', caDir]);
    expect(withDir.code).toBe(1);
    expect(withDir.stdout).toContain(
      `fix: Issue a new certificate: depotkit cert issue --ca ${caDir} --dns other.lab.local --dns depot.lab.local --dns depot --ip 10.0.0.5 --out <out-dir>`,
    );
  });

  it("lints the test helper's broken certificates with the right ids", async () => {
    const ca = { keyPem: await readFile(join(caDir, CA_KEY_FILE), 'utf8'), certPem: await readFile(join(caDir, CA_CERT_FILE), 'utf8') };
    const cases = [
      ['no-san', 'cert.san.missing'],
      ['ip-cn', 'cert.cn.ip'],
      ['expired', 'cert.expired'],
      ['wrong-host', 'cert.san.host-missing'],
      ['self-signed', 'cert.chain.untrusted'],
    ] as const;
    await Promise.all(
      cases.map(async ([kind, id]) => {
        const path = join(dir, `${kind}.pem`);
        await writeFile(path, brokenServerCert(ca, kind, HOST).certPem);
        const r = await runCli(['cert', 'inspect', path, '--host', HOST, '--ca', join(caDir, CA_CERT_FILE)]);
        expect(r.code, kind).toBe(1);
        expect(r.stdout, kind).toContain(`ERROR ${id}:`);
        expect(r.stdout, kind).toContain('fix: ');
      }),
    );
  });

  it('shows what a CSR asks for, after verifying its signature', async () => {
    const csr = join(dir, 'show.csr');
    expect(
      openssl([
        'req',
        '-new',
        '-newkey',
        'rsa:3072',
        '-nodes',
        '-keyout',
        join(dir, 'show.key'),
        '-out',
        csr,
        '-subj',
        '/O=Lab/CN=vc.lab.local',
        '-addext',
        'subjectAltName=DNS:vc.lab.local,IP:10.0.0.9',
      ]).code,
    ).toBe(0);
    const r = await runCli(['cert', 'inspect', csr]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      'Request:      O=Lab, CN=vc.lab.local\nSAN:          DNS:vc.lab.local, IP:10.0.0.9\nKey:          RSA 3072 bits\nSignature:    sha256WithRSAEncryption, verified\n',
    );
    const json = JSON.parse((await runCli(['cert', 'inspect', csr, '--json'])).stdout);
    expect(json.request).toEqual({
      subject: 'O=Lab, CN=vc.lab.local',
      commonName: 'vc.lab.local',
      san: { dns: ['vc.lab.local'], ips: ['10.0.0.9'] },
      key: { type: 'rsa', bits: 3072 },
      signatureAlgorithm: 'sha256WithRSAEncryption',
    });
    expectUsageError(await runCli(['cert', 'inspect', csr, '--host', 'vc.lab.local']), /is a certificate request; --host, --ip and --ca lint certificates\./);
  });

  it('only shows the certificate without --host or --ca, and refuses malformed PEM', async () => {
    const r = await runCli(['cert', 'inspect', join(caDir, CA_CERT_FILE), '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).not.toHaveProperty('findings');
    const bad = join(dir, 'bad.pem');
    await writeFile(bad, '-----BEGIN CERTIFICATE-----\nMIIB\n');
    expectUsageError(await runCli(['cert', 'inspect', bad]), /bad\.pem is malformed: the CERTIFICATE block has no END line\./);
    const der = join(dir, 'ca.der');
    expect(openssl(['x509', '-in', join(caDir, CA_CERT_FILE), '-outform', 'DER', '-out', der]).code).toBe(0);
    expectUsageError(
      await runCli(['cert', 'inspect', der]),
      /ca\.der holds no CERTIFICATE, CERTIFICATE REQUEST or NEW CERTIFICATE REQUEST PEM block\.\n {2}It looks like binary DER; convert it with: openssl x509 -inform DER/,
    );
  });
});
