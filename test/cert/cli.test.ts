import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CA_CERT_FILE, CA_KEY_FILE, SERVER_CERT_FILE, SERVER_CHAIN_FILE, createCa, issueCert, writeCaDir } from '../../src/cert/index.js';
import { exists } from '../../src/util/fs.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { useTempDir } from '../helpers/temp.js';
import { opensslCsr } from './openssl.js';

// What only the command line does: flags, the printed text and JSON, exit codes and the one sentence on bad
// input. What the commands write and refuse is tested in-process: issue-dir.test.ts and inspect.test.ts.
const HOST = 'depot.lab.local';
const tmp = useTempDir();
let caDir: string;
let srvDir: string;
beforeAll(async () => {
  caDir = join(tmp.dir, 'ca');
  srvDir = join(tmp.dir, 'srv');
  await writeCaDir(caDir, await createCa({ cn: 'CLI Lab CA', keySize: 2048, days: 365 }));
  await issueCert(srvDir, { caDir, dns: [HOST, 'depot'], ips: ['10.0.0.5'] });
});

/** Bad input: exit 2, one sentence (plus an optional hint), no stack trace. */
function expectUsageError(r: CliResult, message: RegExp): void {
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.stdout).toBe('');
}

describe('depotkit cert ca / issue', () => {
  it('prints JSON with --json, never the key or the passphrase, encrypts with --passphrase-file, and refuses to overwrite without --force', async () => {
    const secret = join(tmp.dir, 'pass.txt');
    await writeFile(secret, 'lab passphrase\n');
    const out = join(tmp.dir, 'ca2');
    const r = await runCli(['cert', 'ca', '--out', out, '--key-size', '2048', '--passphrase-file', secret, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      keyPath: join(out, CA_KEY_FILE),
      certPath: join(out, CA_CERT_FILE),
      certificate: { isCa: true, pathLen: 0, subject: 'CN=depotkit private CA' },
    });
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/PRIVATE KEY|lab passphrase/);
    expect((await stat(join(out, CA_KEY_FILE))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(out, CA_KEY_FILE), 'utf8')).toContain('ENCRYPTED PRIVATE KEY');
    expectUsageError(await runCli(['cert', 'ca', '--out', out, '--key-size', '2048']), /ca-key\.pem already exists\.\n {2}Use --force to replace it\./);
  });

  it('takes the CA passphrase from --ca-passphrase-env, and says nothing of a CA key only its owner reads', async () => {
    const enc = join(tmp.dir, 'enc-ca');
    await writeCaDir(enc, await createCa({ keySize: 2048 }), { passphrase: 'lab passphrase' });
    const ok = await runCli(['cert', 'issue', '--ca', enc, '--dns', HOST, '--out', join(tmp.dir, 'e1'), '--ca-passphrase-env', 'LAB_CA_PASS'], {
      env: { LAB_CA_PASS: 'lab passphrase' },
    });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`Issued CN=${HOST} by CN=depotkit private CA`);
    expect(`${ok.stdout}${ok.stderr}`).not.toContain('lab passphrase');
    expect(ok.stderr).not.toContain('readable by others');
  });

  it('warns on stderr when the CA ends before the requested validity and when the CA key is readable by others', async () => {
    const exposed = join(tmp.dir, 'exposed-ca');
    await writeCaDir(exposed, await createCa({ keySize: 2048, days: 365 }));
    await chmod(join(exposed, CA_KEY_FILE), 0o644);
    const r = await runCli(['cert', 'issue', '--ca', exposed, '--dns', HOST, '--out', join(tmp.dir, 'exposed-srv'), '--days', '825']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/warning: the CA expires on .* so the certificate ends then instead of after 825 days\./);
    expect(r.stderr).toContain(`warning: ${join(exposed, CA_KEY_FILE)} is readable by others (mode 0644); run chmod 600 ${join(exposed, CA_KEY_FILE)}.`);
  });

  // Independent processes: run them side by side.
  it.concurrent.each([
    [['cert', 'ca', '--out', 'x', '--key-size', '1000'], /--key-size must be one of 2048, 3072, 4096, not "1000"/],
    [['cert', 'ca', '--out', 'x', '--days', 'ten'], /--days takes a whole number, not "ten"/],
    [['cert', 'ca', '--out', 'x', '--days', '0'], /--days must be at least 1/],
    [
      ['cert', 'ca', '--out', 'x', '--key-size', '2048', '--days', '3000000'],
      /^depotkit: A validity of 3000000 days would end after 9999-12-31T23:59:59Z, the latest date a certificate can hold\.\n$/,
    ],
    [['cert', 'issue', '--ca', 'nowhere', '--dns', HOST, '--out', 'x'], /nowhere\/ca-cert\.pem does not exist; nowhere is not a CA folder\./],
  ])('exits 2 with one sentence for %j, writing nothing', async (args, message) => {
    expectUsageError(await runCli(args, { cwd: tmp.dir }), message);
    expect(await exists(join(tmp.dir, 'x'))).toBe(false);
  });
});

describe('depotkit cert sign-csr', () => {
  it('prints the signed certificate as JSON with --json, and as lines naming the CA certificate to send', async () => {
    const { csrPath } = opensslCsr(tmp.dir, 'vc', '/CN=vc.lab.local', ['-addext', 'subjectAltName=DNS:vc.lab.local']);
    const r = await runCli(['cert', 'sign-csr', '--ca', caDir, '--csr', csrPath, '--out', join(tmp.dir, 'vc.pem'), '--days', '100', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).certificate.san).toEqual({ dns: ['vc.lab.local'], ips: [] });
    const nosan = opensslCsr(tmp.dir, 'nosan', '/CN=old.lab.local');
    const text = await runCli(['cert', 'sign-csr', '--ca', caDir, '--csr', nosan.csrPath, '--out', join(tmp.dir, 'nosan.pem'), '--allow-no-san']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('SAN:     DNS:old.lab.local');
    expect(text.stdout).toContain(`The CA certificate to send with it: ${join(caDir, CA_CERT_FILE)}`);
  });
});

describe('depotkit cert inspect', () => {
  it('shows the certificate and its chain, and lints it: exit 0 when fit for the host', async () => {
    // --ca takes the CA folder as well as its certificate file.
    const r = await runCli(['cert', 'inspect', join(srvDir, SERVER_CHAIN_FILE), '--host', HOST, '--ca', caDir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Subject:      CN=${HOST}`);
    expect(r.stdout).toContain('SAN:          DNS:depot.lab.local, DNS:depot, IP:10.0.0.5');
    expect(r.stdout).toContain('Chain certificate 1:');
    expect(r.stdout).toContain(`Lint: no problems for ${HOST}.`);
  });

  it('exits 1 with the findings as JSON, or as lines with the fix naming the CA folder given', async () => {
    const r = await runCli(['cert', 'inspect', join(srvDir, SERVER_CERT_FILE), '--host', 'other.lab.local', '--json']);
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout);
    expect(json.ok).toBe(false);
    expect(json.findings[0]).toMatchObject({ id: 'cert.san.host-missing', severity: 'error' });
    expect(json.findings[0].fix).toBe(
      'Issue a new certificate: depotkit cert issue --ca <ca-dir> --dns other.lab.local --dns depot.lab.local --dns depot --ip 10.0.0.5 --out <out-dir>',
    );
    expect(json.certificate.fingerprints.sha256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    const withDir = await runCli(['cert', 'inspect', join(srvDir, SERVER_CERT_FILE), '--host', 'other.lab.local', '--ca', caDir]);
    expect(withDir.code).toBe(1);
    expect(withDir.stdout).toContain('ERROR cert.san.host-missing:');
    expect(withDir.stdout).toContain(
      `fix: Issue a new certificate: depotkit cert issue --ca ${caDir} --dns other.lab.local --dns depot.lab.local --dns depot --ip 10.0.0.5 --out <out-dir>`,
    );
  });

  it('only shows the certificate without --host or --ca, and refuses a file that is not there', async () => {
    const r = await runCli(['cert', 'inspect', join(caDir, CA_CERT_FILE), '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).not.toHaveProperty('findings');
    expectUsageError(await runCli(['cert', 'inspect', 'missing.pem'], { cwd: tmp.dir }), /missing\.pem does not exist/);
  });

  it('shows what a CSR asks for, and refuses to lint one', async () => {
    const { csrPath } = opensslCsr(tmp.dir, 'show', '/O=Lab/CN=vc.lab.local', ['-addext', 'subjectAltName=DNS:vc.lab.local,IP:10.0.0.9']);
    const r = await runCli(['cert', 'inspect', csrPath]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      'Request:      O=Lab, CN=vc.lab.local\nSAN:          DNS:vc.lab.local, IP:10.0.0.9\nKey:          RSA 2048 bits\nSignature:    sha256WithRSAEncryption, verified\n',
    );
    expectUsageError(
      await runCli(['cert', 'inspect', csrPath, '--host', 'vc.lab.local']),
      /is a certificate request; --host, --ip and --ca lint certificates\./,
    );
  });
});
