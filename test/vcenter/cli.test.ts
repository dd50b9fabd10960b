import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MGMT_API, MGMT_HEADERS } from '../../src/constants.js';
import { issueServerCert, sha256Fingerprint } from '../../src/cert/index.js';
import type { MgmtSimulator } from '../../src/simulators/vcenter/index.js';
import { runCli, spawnCliJson } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { handshake } from '../../src/vcenter/served.js';
import { PASSWORD, USER, basic, call, forgeCa, startSim, testCa, writeFixtures } from './helpers.js';

describe('depotkit mgmt replace-cert', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let sim: MgmtSimulator;
  let files: { caDir: string; serverCa: string; passwordFile: string };

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir());
    sim = await startSim();
    files = await writeFixtures(dir, sim, await testCa());
  });
  afterAll(async () => {
    await sim.close();
    await cleanup();
  });

  const base = () => ['mgmt', 'replace-cert', '--server', sim.url, '--user', USER, '--password-file', files.passwordFile, '--ca', files.caDir];

  it('--dry-run logs in, prints the plan and changes nothing', async () => {
    const before = sim.currentCertPem();
    const res = await runCli([...base(), '--server-ca', files.serverCa, '--dry-run', '--san', 'vc.lab.local']);
    expect(res.stderr).not.toContain(PASSWORD);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/Dry run on https:\/\/127\.0\.0\.1:\d+ \(\/api API\): logged in, nothing changed/);
    expect(res.stdout).toContain('SAN 127.0.0.1, vc.lab.local');
    expect(sim.currentCertPem()).toBe(before);
    // The default validity is the server's own two years: nothing to warn about.
    expect(res.stderr).not.toContain('--days');
  });

  it('warns about --insecure with --json too, on stderr, keeping stdout JSON', async () => {
    const res = await runCli([...base(), '--insecure', '--dry-run', '--json']);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ ok: true, dryRun: true });
    expect(res.stderr).toContain("warning: not validating the server's current certificate (--insecure).");
  });

  it("replaces the certificate through /rest and reports it as JSON, warning that --days is not the server's two years", async () => {
    const res = await runCli([...base(), '--server-ca', files.serverCa, '--api', 'rest', '--key-size', '2048', '--org', 'Lab', '--days', '365', '--json']);
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(
      /warning: --days 365: a certificate for the server's own CSR is valid for 730 days \(2 years\) on the real server;.*some server versions may refuse it.*--cert and --key/,
    );
    const report = JSON.parse(res.stdout);
    // The toolkit's CA signs the validity asked for.
    expect(Date.parse(report.certificate.notAfter) - Date.parse(report.certificate.notBefore)).toBe(365 * 86_400_000);
    expect(report).toMatchObject({
      ok: true,
      api: 'rest',
      verified: { trusted: true, hostname: true },
      certificate: { subject: 'O=Lab, CN=127.0.0.1', issuer: 'CN=depotkit test CA' },
    });
    expect(report.certificate.sha256).toBe(sha256Fingerprint(sim.currentCertPem()));
    expect(`${res.stdout}${res.stderr}`).not.toContain(PASSWORD);
  });

  it('shows the server refusing the same certificate twice, with its message (exit 1)', async () => {
    const made = await issueServerCert(await testCa(), { dns: ['localhost'], ips: ['127.0.0.1'], days: 30 });
    await writeFile(join(dir, 'made.pem'), made.chainPem.replace(/\n/g, '\r\n'));
    await writeFile(join(dir, 'made-key.pem'), made.keyPem, { mode: 0o600 });
    const args = [...base(), '--server-ca', join(files.caDir, 'ca-cert.pem'), '--cert', join(dir, 'made.pem'), '--key', join(dir, 'made-key.pem')];
    const first = await runCli(args);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('verified: trusted by the CA and valid for the host name');
    expect(sim.currentCertPem()).toBe(made.certPem);
    const second = await runCli(args);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/the server answered 400 INVALID_ARGUMENT: The certificate is the same as the current machine certificate/);
    expect(second.stderr).not.toMatch(/\n\s+at /);
  });

  it("keeps the current certificate's names: reached as localhost, a server named 127.0.0.1 gets a certificate for both", async () => {
    const named = await startSim({ hostname: '127.0.0.1' });
    try {
      const server = named.url.replace('127.0.0.1', 'localhost');
      const res = await runCli([
        'mgmt',
        'replace-cert',
        '--server',
        server,
        '--user',
        USER,
        '--password-file',
        files.passwordFile,
        '--ca',
        files.caDir,
        '--insecure',
        '--key-size',
        '2048',
        '--json',
      ]);
      expect(res.stderr).not.toMatch(/subject alternative names do not include/);
      expect(res.code).toBe(0);
      expect(JSON.parse(res.stdout)).toMatchObject({
        ok: true,
        csrSpec: { common_name: 'localhost', subject_alt_name: ['localhost', '127.0.0.1'] },
        certificate: { san: ['localhost', '127.0.0.1'] },
        verified: { trusted: true, hostname: true },
      });
      expect(named.restarts()).toBe(1);
    } finally {
      await named.close();
    }
  });

  it('signs with an intermediate CA whose ca-cert.pem holds the root after it, sending both as root_cert', async () => {
    const root = forgeCa('CLI Root CA');
    const issuing = forgeCa('CLI Issuing CA', root);
    const caDir = join(dir, 'issuing-ca');
    await mkdir(caDir);
    await writeFile(join(caDir, 'ca-key.pem'), issuing.keyPem, { mode: 0o600 });
    await writeFile(join(caDir, 'ca-cert.pem'), `${issuing.certPem}${root.certPem}`);
    const chained = await startSim();
    try {
      const serverCa = join(dir, 'chained-server.pem');
      await writeFile(serverCa, chained.currentCertPem());
      const args = [
        'mgmt',
        'replace-cert',
        '--server',
        chained.url,
        '--user',
        USER,
        '--password-file',
        files.passwordFile,
        '--ca',
        caDir,
        '--key-size',
        '2048',
        '--json',
      ];
      const res = await runCli([...args, '--server-ca', serverCa]);
      expect(res.code).toBe(0);
      expect(JSON.parse(res.stdout)).toMatchObject({ ok: true, certificate: { issuer: 'CN=CLI Issuing CA' }, verified: { trusted: true, hostname: true } });
      // Served with its intermediate: a client that trusts only the root verifies it.
      expect(await handshake(new URL(chained.url), { caPems: [root.certPem] })).toMatchObject({ ok: true, authorized: true });

      // Without the root after it, the CA is refused before the server is asked for anything.
      await writeFile(join(caDir, 'ca-cert.pem'), issuing.certPem);
      const sessions = chained.sessionsCreated();
      const alone = await runCli([...args, '--insecure']);
      expect(alone.code).toBe(2);
      expect(alone.stderr).toContain('(CN=CLI Issuing CA) is not a self-signed root and its issuers up to the root are not given');
      expect(alone.stderr).not.toMatch(/\n\s+at /);
      expect(chained.sessionsCreated()).toBe(sessions);
    } finally {
      await chained.close();
    }
  });

  it('refuses bad usage with one sentence and exit 2', async () => {
    const both = await runCli([...base(), '--server-ca', files.serverCa, '--insecure']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('Give --server-ca or --insecure, not both: --insecure trusts any certificate.');
    const half = await runCli([...base(), '--cert', files.serverCa]);
    expect(half.code).toBe(2);
    expect(half.stderr).toContain('--cert and --key go together');
    const http = await runCli(['mgmt', 'replace-cert', '--server', 'http://127.0.0.1:1', '--password-file', files.passwordFile, '--ca', files.caDir]);
    expect(http.code).toBe(2);
    expect(http.stderr).toContain('reached over HTTPS');
    const api = await runCli([...base(), '--api', 'soap']);
    expect(api.code).toBe(2);
    const sessions = sim.sessionsCreated();
    const long = await runCli([...base(), '--server-ca', files.serverCa, '--days', '5000']);
    expect(long.code).toBe(2);
    expect(long.stderr).toContain('would outlive the CA');
    // Refused before the server was asked for anything.
    expect(sim.sessionsCreated()).toBe(sessions);
  });

  it('tells how to trust an untrusted server and refuses a wrong password without printing it', async () => {
    const untrusted = await runCli(base());
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toMatch(/does not trust \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\)/);
    expect(untrusted.stderr).toContain('--server-ca FILE');
    const wrongFile = join(dir, 'wrong');
    await writeFile(wrongFile, 'Wr0ng-pa55\n', { mode: 0o600 });
    const wrong = await runCli(['mgmt', 'replace-cert', '--server', sim.url, '--password-file', wrongFile, '--ca', files.caDir, '--insecure']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('refused the user name or password');
    expect(wrong.stderr).not.toContain('Wr0ng-pa55');
  });
});

describe('depotkit sim mgmt', () => {
  it('serves the API until interrupted, with the user from the password file', async () => {
    const { dir, cleanup } = await tempDir();
    const passwordFile = join(dir, 'pw');
    await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
    const started = await spawnCliJson<{ url: string; certificate: string }>([
      'sim',
      'mgmt',
      '--password-file',
      passwordFile,
      '--cert-out',
      join(dir, 'sim.pem'),
      '--restart-ms',
      '100',
      '--json',
    ]);
    const { child, info } = started;
    try {
      const sim = { url: info.url, currentCertPem: () => '' } as unknown as MgmtSimulator;
      const trust = await readFile(info.certificate, 'utf8');
      const session = await call(sim, 'POST', MGMT_API.rest.session, {
        headers: { authorization: basic(USER, PASSWORD), [MGMT_HEADERS.useHeaderAuthn]: 'true' },
        trust,
      });
      expect(session.status).toBe(200);
      const tls = await call(sim, 'GET', MGMT_API.rest.tls, { headers: { [MGMT_HEADERS.sessionId]: (session.body as { value: string }).value }, trust });
      expect((tls.body as { value: { cert: string } }).value.cert).toBe(trust);
      child.kill('SIGTERM');
      expect(await started.exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await cleanup();
    }
  });
});
