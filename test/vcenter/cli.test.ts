import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatReport } from '../../src/cli/vcenter.js';
import { MGMT_API, MGMT_HEADERS } from '../../src/constants.js';
import { issueServerCert } from '../../src/cert/index.js';
import type { MgmtSimulator } from '../../src/simulators/vcenter/index.js';
import { replaceCertificate } from '../../src/vcenter/index.js';
import { runCli, spawnCliJson, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { handshake } from '../../src/vcenter/served.js';
import { PASSWORD, USER, basic, call, forgeCa, startSim, testCa, writeFixtures } from './helpers.js';

// What only the command line does; what replaceCertificate does is replace.test.ts.
describe('depotkit mgmt replace-cert', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  // Only planned against, never changed: each test that replaces a certificate starts its own.
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

  const login = () => ['--user', USER, '--password-file', files.passwordFile, '--ca', files.caDir];
  const base = (server = sim.url) => ['mgmt', 'replace-cert', '--server', server, ...login()];

  /** Exit 2, the sentence, no stack trace. */
  function expectUsageError(r: CliResult, message: string): void {
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  }

  it('--dry-run logs in, prints the plan and changes nothing, without a word of --days at the default validity', async () => {
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

  it("warns about --insecure and a --days that is not the server's two years on stderr with --json, keeping stdout JSON", async () => {
    const res = await runCli([...base(), '--insecure', '--dry-run', '--days', '365', '--json']);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ ok: true, dryRun: true });
    expect(res.stderr).toContain("warning: not validating the server's current certificate (--insecure).");
    expect(res.stderr).toMatch(
      /warning: --days 365: a certificate for the server's own CSR is valid for 730 days \(2 years\) on the real server;.*some server versions may refuse it.*--cert and --key/,
    );
  });

  it('reads --cert and --key (a CRLF chain file), and shows the server refusing the certificate it serves already (exit 1)', async () => {
    const own = await startSim();
    try {
      const made = await issueServerCert(await testCa(), { dns: ['localhost'], ips: ['127.0.0.1'], days: 30 });
      const first = await replaceCertificate({
        server: own.url,
        user: USER,
        password: PASSWORD,
        ca: { certPem: (await testCa()).certPem },
        custom: { certPem: made.chainPem, keyPem: made.keyPem },
        serverCaPems: [own.currentCertPem()],
      });
      expect(formatReport(first)).toContain('  verified: trusted by the CA and valid for the host name');
      expect(own.currentCertPem()).toBe(made.certPem);
      await writeFile(join(dir, 'made.pem'), made.chainPem.replace(/\n/g, '\r\n'));
      await writeFile(join(dir, 'made-key.pem'), made.keyPem, { mode: 0o600 });
      const args = [...base(own.url), '--server-ca', join(files.caDir, 'ca-cert.pem'), '--cert', join(dir, 'made.pem'), '--key', join(dir, 'made-key.pem')];
      const second = await runCli(args);
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(/the server answered 400 INVALID_ARGUMENT: The certificate is the same as the current machine certificate/);
      expect(second.stderr).not.toMatch(/\n\s+at /);
    } finally {
      await own.close();
    }
  });

  it('signs with the CA folder of an intermediate CA whose ca-cert.pem holds the root after it, sending both as root_cert', async () => {
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
      ];
      const res = await runCli([...args, '--server-ca', serverCa, '--json']);
      expect(res.code).toBe(0);
      expect(JSON.parse(res.stdout)).toMatchObject({ ok: true, certificate: { issuer: 'CN=CLI Issuing CA' }, verified: { trusted: true, hostname: true } });
      // Served with its intermediate: a client that trusts only the root verifies it.
      expect(await handshake(new URL(chained.url), { caPems: [root.certPem] })).toMatchObject({ ok: true, authorized: true });
    } finally {
      await chained.close();
    }
  });

  // Independent processes: run them side by side.
  it.concurrent.each([
    [['--server-ca', 'server-ca.pem', '--insecure'], 'Give --server-ca or --insecure, not both: --insecure trusts any certificate.'],
    [['--cert', 'server-ca.pem'], '--cert and --key go together'],
    [['--api', 'soap'], '--api'],
  ])('refuses %j with one sentence and exit 2, before asking the server anything', async (args, message) => {
    const sessions = sim.sessionsCreated();
    expectUsageError(await runCli([...base(), ...args], { cwd: dir }), message);
    expect(sim.sessionsCreated()).toBe(sessions);
  });

  it('refuses a wrong password without printing it (exit 1)', async () => {
    const wrongFile = join(dir, 'wrong');
    await writeFile(wrongFile, 'Wr0ng-pa55\n', { mode: 0o600 });
    const wrong = await runCli(['mgmt', 'replace-cert', '--server', sim.url, '--password-file', wrongFile, '--ca', files.caDir, '--insecure']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('refused the user name or password');
    expect(`${wrong.stdout}${wrong.stderr}`).not.toContain('Wr0ng-pa55');
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
