import { spawn } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueServerCert } from '../../src/cert/index.js';
import type { InstallerSimulator } from '../../src/simulators/installer/index.js';
import { CLI, runCli, spawnCliJson } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { until } from '../helpers/poll.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER, depotCa, startSim, startTestDepot, type TestDepot } from './helpers.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
let depot: TestDepot;
let files: { password: string; depotPassword: string; depotCa: string };

beforeAll(async () => {
  tmp = await tempDir('depotkit-installer-cli-');
  depot = await startTestDepot(tmp.dir);
  files = { password: join(tmp.dir, 'password'), depotPassword: join(tmp.dir, 'depot-password'), depotCa: join(tmp.dir, 'depot-ca.pem') };
  await writeFile(files.password, `${PASSWORD}\n`, { mode: 0o600 });
  await writeFile(files.depotPassword, `${DEPOT_PASSWORD}\n`, { mode: 0o600 });
  await writeFile(files.depotCa, depot.ca.certPem);
});
afterAll(async () => {
  await depot?.close();
  await tmp?.cleanup();
});

async function simCaFile(sim: InstallerSimulator, name: string): Promise<string> {
  const path = join(tmp.dir, `${name}-ca.pem`);
  await writeFile(path, sim.caPem);
  return path;
}

interface Rows {
  ok: boolean;
  installers: Array<{
    name: string;
    ok: boolean;
    result?: Record<string, unknown> & { action?: string; status?: string };
    error?: { message: string; errorCode?: string; fix?: string };
  }>;
}

describe('depotkit installer', () => {
  it('the documented outcome: the depot update fails with the secure-protocol error, installer trust imports the CA, the same update succeeds, status shows it', async () => {
    const sim = await startSim();
    try {
      const connection = ['--installer', sim.url, '--user', USER, '--password-file', files.password, '--installer-ca', await simCaFile(sim, 'flow')];
      const depotArgs = [
        'installer',
        'depot',
        ...connection,
        '--depot-host',
        'localhost',
        '--depot-port',
        String(depot.port),
        '--depot-user',
        DEPOT_USER,
        '--depot-password-file',
        files.depotPassword,
      ];

      const failed = await runCli(depotArgs);
      expect(failed.code).toBe(1);
      // The installer keeps the refused attempt with its status: the row reports it.
      expect(failed.stdout).toContain(`FAILED  depot localhost:${depot.port}: UNKNOWN_FAILURE`);
      expect(failed.stdout).toContain(
        'VMWARE_DEPOT_CONNECT_FAILURE: Failed to connect to VMware depot with the provided user credentials. Cause: Secure protocol communication error',
      );
      const failedJson = await runCli([...depotArgs, '--json']);
      expect(failedJson.code).toBe(1);
      const failedRow = (JSON.parse(failedJson.stdout) as Rows).installers[0]!;
      expect(failedRow).toMatchObject({ ok: false, result: { ok: false, status: 'UNKNOWN_FAILURE', errorCode: 'VMWARE_DEPOT_CONNECT_FAILURE' } });
      expect(failedJson.stdout).not.toContain(DEPOT_PASSWORD);
      expect(failed.stdout).toContain('import the CA that issued it (depotkit installer trust --ca CA-CERT)');
      expect(sim.logs.join('\n')).toMatch(new RegExp(`TLS fatal alert certificate_unknown against depot localhost:${depot.port}`));

      const trust = await runCli(['installer', 'trust', ...connection, '--ca', files.depotCa]);
      expect(trust.code).toBe(0);
      expect(trust.stdout).toMatch(/ok {2}imported: CN=depotkit installer test CA \(alias vcf_depotkit-installer-test-CA_[0-9a-f]{64}\)/);

      const ok = await runCli([...depotArgs, '--json']);
      expect(ok.code).toBe(0);
      const rows = JSON.parse(ok.stdout) as Rows;
      expect(rows.ok).toBe(true);
      expect(rows.installers[0]!.result).toMatchObject({ action: 'updated', ok: true, status: 'DEPOT_CONNECTION_SUCCESSFUL' });

      const infoReads = () => sim.logs.filter((l) => l.includes('GET /v1/system/appliance-info')).length;
      const readsBefore = infoReads();
      const status = await runCli(['installer', 'status', ...connection]);
      expect(status.code).toBe(0);
      // One read of appliance-info per session: the row's role and version and the status's appliance are one answer.
      expect(infoReads() - readsBefore).toBe(1);
      expect(status.stdout).toContain(`depot: localhost:${depot.port} as ${DEPOT_USER}: DEPOT_CONNECTION_SUCCESSFUL`);
      expect(status.stdout).toMatch(/trusted certificates: 1\n\s+vcf_depotkit-installer-test-CA_[0-9a-f]{64}: CN=depotkit installer test CA/);

      // Re-runs do no duplicate work.
      const trustAgain = await runCli(['installer', 'trust', ...connection, '--ca', files.depotCa]);
      expect(trustAgain.stdout).toContain('already trusted');
      const depotAgain = await runCli(depotArgs);
      expect(depotAgain.code).toBe(0);
      expect(depotAgain.stdout).toContain('(already set, nothing sent)');
      expect(sim.logs.filter((l) => l.includes('POST /v1/sddc-manager/trusted-certificates'))).toHaveLength(1);
      expect(sim.logs.filter((l) => l.includes('PUT /v1/system/settings/depot 202'))).toHaveLength(1);

      // The depot's own certificate given as the CA: it works, with a warning that it will not last.
      const leafFile = join(tmp.dir, 'depot-leaf.pem');
      await writeFile(leafFile, depot.certPem);
      const leafTrust = await runCli(['installer', 'trust', ...connection, '--ca', leafFile]);
      expect(leafTrust.code).toBe(0);
      expect(leafTrust.stderr).toMatch(
        /^warning: CN=localhost is not a CA certificate .*re-issued\. Trust the CA that issued it instead \(CN=depotkit installer test CA\)\./m,
      );
      expect(trust.stderr).not.toContain('is not a CA certificate');
      // Every session (one per command) was revoked at exit, and no password reached a log.
      expect(sim.logs.filter((l) => l.includes('DELETE /v1/tokens/refresh-token 204'))).toHaveLength(8);
      expect(sim.logs.join('\n')).not.toMatch(new RegExp(`${PASSWORD}|${DEPOT_PASSWORD}`));
    } finally {
      await sim.close();
    }
  }, 240_000);

  it('runs a fleet from an inventory: one installer down and one with wrong credentials fail their rows, the others succeed, exit 1; a re-run does nothing twice', async () => {
    const sims = await Promise.all([0, 1, 2, 3].map(() => startSim()));
    const down = await startSim();
    const downUrl = down.url;
    await down.close();
    try {
      const bundle = join(tmp.dir, 'fleet-ca.pem');
      await writeFile(bundle, sims.map((s) => s.caPem).join(''));
      const wrong = join(tmp.dir, 'wrong-password');
      // Readable by anyone: the fleet warns of it as of a --password-file.
      await writeFile(wrong, 'not-it\n', { mode: 0o644 });
      await chmod(wrong, 0o644);
      const inventory = join(tmp.dir, 'fleet.yaml');
      await writeFile(
        inventory,
        [
          'defaults:',
          `  user: ${USER}`,
          '  passwordEnv: FLEET_PASSWORD',
          `  installerCa: ${bundle}`,
          'installers:',
          ...sims.slice(0, 3).map((s, i) => `  - { name: site-${i}, url: "${s.url}" }`),
          `  - { name: site-wrong, url: "${sims[3]!.url}", passwordFile: wrong-password }`,
          `  - { name: site-down, url: "${downUrl}" }`,
        ].join('\n'),
      );
      // A CA folder (as `depotkit cert ca` makes it) works as well as the certificate file.
      const caDir = join(tmp.dir, 'ca-folder');
      await mkdir(caDir);
      await writeFile(join(caDir, 'ca-cert.pem'), depot.ca.certPem);
      const args = [
        'installer',
        'depot',
        '--inventory',
        inventory,
        '--concurrency',
        '2',
        '--trust-ca',
        caDir,
        '--depot-url',
        `https://localhost:${depot.port}`,
        '--depot-user',
        DEPOT_USER,
        '--depot-password-env',
        'FLEET_DEPOT_PASSWORD',
      ];
      const env = { FLEET_PASSWORD: PASSWORD, FLEET_DEPOT_PASSWORD: DEPOT_PASSWORD };

      const first = await runCli([...args, '--json'], { env });
      expect(first.code).toBe(1);
      expect(first.stderr).toContain(`${wrong} is readable by others (mode 0644); run chmod 600 ${wrong}.`);
      const rows = JSON.parse(first.stdout) as Rows;
      expect(rows.installers.map((r) => [r.name, r.ok])).toEqual([
        ['site-0', true],
        ['site-1', true],
        ['site-2', true],
        ['site-wrong', false],
        ['site-down', false],
      ]);
      expect(rows.installers[0]!.result).toMatchObject({ action: 'updated', status: 'DEPOT_CONNECTION_SUCCESSFUL', trusted: [{ action: 'imported' }] });
      expect(rows.installers[3]!.error).toMatchObject({
        errorCode: 'INVALID_CREDENTIALS',
        message: 'Log-in failed: INVALID_CREDENTIALS: Invalid username or password.',
      });
      expect(rows.installers[4]!.error!.message).toMatch(/^Cannot reach the installer 127\.0\.0\.1:\d+: the connection was refused \(ECONNREFUSED\)\.$/);

      const human = await runCli(args, { env });
      expect(human.code).toBe(1);
      expect(human.stdout).toMatch(/^site-0 {2}VcfInstaller 9\.\S+ {2}ok {2}depot localhost:\d+: DEPOT_CONNECTION_SUCCESSFUL \(already set, nothing sent\)$/m);
      expect(human.stdout).toMatch(/^site-wrong {2}FAILED {2}Log-in failed: INVALID_CREDENTIALS/m);
      expect(human.stdout).toContain('5 consumers: 3 ok, 2 failed.');
      for (const sim of sims.slice(0, 3)) {
        expect(sim.logs.filter((l) => l.includes('POST /v1/sddc-manager/trusted-certificates 200'))).toHaveLength(1);
        expect(sim.logs.filter((l) => l.includes('PUT /v1/system/settings/depot 202'))).toHaveLength(1);
      }

      const status = await runCli(['installer', 'status', '--inventory', inventory, '--json'], { env });
      const statusRows = JSON.parse(status.stdout) as Rows;
      expect(statusRows.installers.filter((r) => r.ok)).toHaveLength(3);
    } finally {
      await Promise.all(sims.map((s) => s.close()));
    }
  });

  it('refuses bad usage with exit 2 and one sentence, and warns about --insecure', async () => {
    const sim = await startSim();
    try {
      const none = await runCli(['installer', 'status', '--password-file', files.password]);
      expect(none.code).toBe(2);
      expect(none.stderr).toContain('Give one installer with --installer URL, or a fleet with --inventory FILE.');

      const noPassword = await runCli(['installer', 'status', '--installer', sim.url, '--insecure']);
      expect(noPassword.code).toBe(2);
      expect(noPassword.stderr).toContain(`No password source for ${USER}`);

      const leaky = join(tmp.dir, 'leaky.yaml');
      await writeFile(leaky, `installers:\n  - url: ${sim.url}\n    password: hunter2\n`);
      const leak = await runCli(['installer', 'status', '--inventory', leaky]);
      expect(leak.code).toBe(2);
      expect(leak.stderr).toMatch(/installer 1 of .*leaky\.yaml holds a password; inventories name where passwords are/);
      expect(leak.stderr).not.toContain('hunter2');

      const both = await runCli([
        'installer',
        'depot',
        '--installer',
        sim.url,
        '--password-file',
        files.password,
        '--insecure',
        '--depot-url',
        'https://a',
        '--depot-host',
        'a',
      ]);
      expect(both.code).toBe(2);

      // Depot credentials never go over plain HTTP: refused before anything is sent.
      const clear = await runCli([
        'installer',
        'depot',
        '--installer',
        sim.url,
        '--password-file',
        files.password,
        '--insecure',
        '--depot-url',
        'http://depot.lab/',
        '--depot-user',
        DEPOT_USER,
        '--depot-password-file',
        files.depotPassword,
      ]);
      expect(clear.code).toBe(2);
      expect(clear.stderr).toContain('Depot credentials go only over HTTPS; http://depot.lab/ is plain HTTP.');
      expect(sim.logs.some((l) => l.includes('POST /v1/tokens'))).toBe(false);

      // A URL ending in /PROD would replace a working setting with a broken one: refused, naming the URL to use.
      const prod = await runCli([
        'installer',
        'depot',
        '--installer',
        sim.url,
        '--password-file',
        files.password,
        '--insecure',
        '--depot-url',
        'https://depot.lab.local:8443/PROD/',
        '--depot-user',
        DEPOT_USER,
        '--depot-password-file',
        files.depotPassword,
      ]);
      expect(prod.code).toBe(2);
      expect(prod.stderr).toContain('The depot URL https://depot.lab.local:8443/PROD/ ends in /PROD');
      expect(prod.stderr).toContain('Use --depot-url https://depot.lab.local:8443');
      expect(sim.logs.some((l) => l.includes('POST /v1/tokens'))).toBe(false);

      const untrusted = await runCli(['installer', 'status', '--installer', sim.url, '--password-file', files.password]);
      expect(untrusted.code).toBe(1);
      expect(untrusted.stdout).toMatch(/presented a certificate this client does not trust/);
      expect(untrusted.stdout).toContain('--installer-ca FILE');

      const insecure = await runCli(['installer', 'status', '--installer', sim.url, '--password-file', files.password, '--insecure']);
      expect(insecure.code).toBe(0);
      expect(insecure.stderr).toMatch(/^warning: not verifying the installer's certificate \(--insecure\)/m);
      expect(insecure.stdout).toMatch(/ {2}VcfInstaller 9\.1\.\S+ {2}ok {2}depot: not configured/);
      expect(insecure.stdout + insecure.stderr).not.toContain(PASSWORD);
    } finally {
      await sim.close();
    }
  });

  it('revokes its session when interrupted in the middle of a depot update', async () => {
    // A "depot" that accepts connections and never answers keeps the update running.
    const sockets: Socket[] = [];
    const silent = createNetServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const sim = await startSim({ depotTimeoutMs: 30_000 });
    try {
      const child = spawn(
        process.execPath,
        [
          CLI,
          'installer',
          'depot',
          '--installer',
          sim.url,
          '--password-file',
          files.password,
          '--installer-ca',
          await simCaFile(sim, 'interrupt'),
          '--depot-host',
          '127.0.0.1',
          '--depot-port',
          String((silent.address() as AddressInfo).port),
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      await until(() => sim.logs.some((l) => l.includes('Updating depot settings')), 'the installer to start checking the depot');
      child.kill('SIGTERM');
      expect(await exited).toBe(130);
      expect(stderr).toContain('interrupted: revoking the open sessions.');
      expect(sim.logs.some((l) => l.includes('DELETE /v1/tokens/refresh-token 204'))).toBe(true);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
      await sim.close();
    }
  });

  it('revokes the session of a log-in that an interruption catches under way', async () => {
    const cert = await issueServerCert(await depotCa(), { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
    const seen: string[] = [];
    // An installer slow to answer the log-in: the interruption arrives before the tokens.
    const slow = createHttpsServer({ key: cert.keyPem, cert: cert.certPem }, (req, res) => {
      seen.push(`${req.method} ${req.url}`);
      req.resume();
      const answer = () => {
        res.writeHead(req.url === '/v1/tokens' ? 201 : 204, { 'content-type': 'application/json' });
        res.end(req.url === '/v1/tokens' ? JSON.stringify({ accessToken: 'x.y.z', refreshToken: { id: 'r-1' } }) : '');
      };
      if (req.url === '/v1/tokens') setTimeout(answer, 1000);
      else answer();
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    try {
      const url = `https://127.0.0.1:${(slow.address() as AddressInfo).port}`;
      const child = spawn(process.execPath, [CLI, 'installer', 'status', '--installer', url, '--password-file', files.password, '--insecure'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      await until(() => seen.length > 0, 'the log-in request');
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      expect(seen).toEqual(['POST /v1/tokens', 'DELETE /v1/tokens/refresh-token']);
    } finally {
      slow.closeAllConnections();
      slow.close();
    }
  });

  it('depotkit sim installer --user NAME without a password file lets NAME log in with the lab password', async () => {
    const certOut = join(tmp.dir, 'cli-sim-user.pem');
    const sim = await spawnCliJson<{ url: string; user: string }>(['sim', 'installer', '--user', 'ops@lab', '--cert-out', certOut, '--quiet', '--json']);
    try {
      const { url, user } = sim.info;
      expect(user).toBe('ops@lab');
      const connection = ['--installer', url, '--installer-ca', certOut, '--password-env', 'LAB_PW', '--json'];
      const status = await runCli(['installer', 'status', ...connection, '--user', 'ops@lab'], { env: { LAB_PW: 'VMware1!VMware1!' } });
      expect(status.code).toBe(0);
      const admin = await runCli(['installer', 'status', ...connection, '--user', 'admin@local'], { env: { LAB_PW: 'VMware1!VMware1!' } });
      expect(admin.code).toBe(1);
    } finally {
      sim.child.kill('SIGTERM');
    }
    expect(await sim.exited).toBe(0);
  });

  it('depotkit sim installer serves until interrupted, writes its certificate and keeps state', async () => {
    const certOut = join(tmp.dir, 'cli-sim.pem');
    const state = join(tmp.dir, 'cli-sim-state.json');
    const sim = await spawnCliJson<{ url: string }>(['sim', 'installer', '--password-file', files.password, '--cert-out', certOut, '--state', state, '--json']);
    try {
      const { url } = sim.info;
      const trust = await runCli([
        'installer',
        'trust',
        '--installer',
        url,
        '--password-file',
        files.password,
        '--installer-ca',
        certOut,
        '--ca',
        files.depotCa,
      ]);
      expect(trust.code).toBe(0);
      expect(JSON.parse(await readFile(state, 'utf8'))).toMatchObject({ version: 1, trustedCertificates: [{ usage: 'TRUSTED_FOR_OUTBOUND' }] });
      expect(sim.stderr()).toContain('POST /v1/sddc-manager/trusted-certificates 200');
    } finally {
      sim.child.kill('SIGTERM');
    }
    expect(await sim.exited).toBe(0);
    expect(sim.stderr()).not.toContain(PASSWORD);
  });
});
