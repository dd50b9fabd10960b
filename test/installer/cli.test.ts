import { spawn } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { createServer as createHttpsServer } from 'node:https';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { daysLeft, issueServerCert } from '../../src/cert/index.js';
import { DEPOT_PATHS, INSTALLER_API } from '../../src/constants.js';
import { readCaPems } from '../../src/cert/trust-source.js';
import { depotLine, statusLines, trustLine } from '../../src/cli/installer-output.js';
import { checkDepotSpec, leafTrustWarnings } from '../../src/installer/index.js';
import { DepotkitError, EXIT } from '../../src/util/errors.js';
import type { InstallerSimulator } from '../../src/simulators/installer/index.js';
import { CLI, runCli, spawnCliJson, spawnCli } from '../helpers/cli.js';
import { runMain } from '../cli/in-process.js';
import { tempDir } from '../helpers/temp.js';
import { until } from '../helpers/poll.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER, asCommandLine, depotCa, startSim, startTestDepot, type TestDepot } from './helpers.js';
import { connectTask, runOnConsumers, statusTask, trustTask } from './commands.js';

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

/** `sim` as the in-process commands reach it, its CA written to a file named after `name`. */
async function connectionTo(sim: InstallerSimulator, name: string) {
  return { installer: sim.url, user: USER, passwordFile: files.password, installerCa: await simCaFile(sim, name) };
}

/** The test depot and its account, as the in-process commands take them. */
const depotSpec = () => ({ hostname: 'localhost', port: depot.port, username: DEPOT_USER, password: DEPOT_PASSWORD });

/** The built CLI's flags for one installer, as `connection` gives it. */
function onInstaller(connection: { installer: string; passwordFile: string; installerCa: string }): string[] {
  return ['--installer', connection.installer, '--user', USER, '--password-file', connection.passwordFile, '--installer-ca', connection.installerCa];
}

/** `installer depot` on `sim`, with its CA written beside the others. */
async function onSim(sim: InstallerSimulator): Promise<string[]> {
  return ['installer', 'depot', ...onInstaller({ installer: sim.url, passwordFile: files.password, installerCa: await simCaFile(sim, `sim-${sim.port}`) })];
}

/** The test depot and its account, as `installer depot` takes them. */
function depotFlags(): string[] {
  return ['--depot-host', 'localhost', '--depot-port', String(depot.port), '--depot-user', DEPOT_USER, '--depot-password-file', files.depotPassword];
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
      const caFile = await simCaFile(sim, 'flow');
      const depotArgs = [
        'installer',
        'depot',
        '--installer',
        sim.url,
        '--user',
        USER,
        '--password-file',
        files.password,
        '--installer-ca',
        caFile,
        '--depot-host',
        'localhost',
        '--depot-port',
        String(depot.port),
        '--depot-user',
        DEPOT_USER,
        '--depot-password-file',
        files.depotPassword,
      ];
      // The refusal as the command line prints it, for people and as JSON; the rest of the flow runs in-process.
      const failed = await runCli(depotArgs);
      expect(failed.code).toBe(1);
      // The installer keeps the refused attempt with its status: the row reports it.
      expect(failed.stdout).toContain(`FAILED  depot localhost:${depot.port}: UNKNOWN_FAILURE`);
      expect(failed.stdout).toContain(
        'VMWARE_DEPOT_CONNECT_FAILURE: Failed to connect to VMware depot with the provided user credentials. Cause: Secure protocol communication error',
      );
      expect(failed.stdout).toContain('import the CA that issued it (depotkit installer trust --ca CA-CERT)');
      const failedJson = await runCli([...depotArgs, '--json']);
      expect(failedJson.code).toBe(1);
      const failedRow = (JSON.parse(failedJson.stdout) as Rows).installers[0]!;
      expect(failedRow).toMatchObject({ ok: false, result: { ok: false, status: 'UNKNOWN_FAILURE', errorCode: 'VMWARE_DEPOT_CONNECT_FAILURE' } });
      expect(failedJson.stdout).not.toContain(DEPOT_PASSWORD);
      expect(sim.logs.join('\n')).toMatch(new RegExp(`TLS fatal alert certificate_unknown against depot localhost:${depot.port}`));

      const connection = { installer: sim.url, user: USER, passwordFile: files.password, installerCa: caFile };
      const spec = depotSpec();
      expect(leafTrustWarnings([depot.ca.certPem])).toEqual([]);
      const trust = await runOnConsumers(connection, trustTask([depot.ca.certPem]));
      expect(trust.ok).toBe(true);
      expect(trustLine(trust.rows[0]!.result!)).toEqual([
        expect.stringMatching(/^imported: CN=depotkit installer test CA \(alias vcf_depotkit-installer-test-CA_[0-9a-f]{64}\)$/),
      ]);

      const ok = await runOnConsumers(connection, connectTask(spec));
      expect(ok.ok).toBe(true);
      expect(ok.rows[0]!.result).toMatchObject({ action: 'updated', ok: true, status: 'DEPOT_CONNECTION_SUCCESSFUL' });

      const infoReads = () => sim.logs.filter((l) => l.includes('GET /v1/system/appliance-info')).length;
      const readsBefore = infoReads();
      const status = await runOnConsumers(connection, statusTask());
      expect(status.ok).toBe(true);
      // One read of appliance-info per session: the row's role and version and the status's appliance are one answer.
      expect(infoReads() - readsBefore).toBe(1);
      const statusText = statusLines(status.rows[0]!.result!).join('\n');
      expect(statusText).toContain(`depot: localhost:${depot.port} as ${DEPOT_USER}: DEPOT_CONNECTION_SUCCESSFUL`);
      expect(statusText).toMatch(/trusted certificates: 1\n\s+vcf_depotkit-installer-test-CA_[0-9a-f]{64}: CN=depotkit installer test CA/);

      // Re-runs do no duplicate work.
      const trustAgain = await runOnConsumers(connection, trustTask([depot.ca.certPem]));
      expect(trustLine(trustAgain.rows[0]!.result!)[0]).toContain('already trusted');
      const depotAgain = await runOnConsumers(connection, connectTask(spec));
      expect(depotAgain.ok).toBe(true);
      expect(depotLine(depotAgain.rows[0]!.result!)[0]).toContain('(already set, nothing sent)');
      expect(sim.logs.filter((l) => l.includes('POST /v1/sddc-manager/trusted-certificates'))).toHaveLength(1);
      expect(sim.logs.filter((l) => l.includes('PUT /v1/system/settings/depot 202'))).toHaveLength(1);

      // The depot's own certificate given as the CA: it works, with a warning that it will not last.
      expect(leafTrustWarnings([depot.certPem])).toEqual([
        expect.stringMatching(/^CN=localhost is not a CA certificate .*re-issued\. Trust the CA that issued it instead \(CN=depotkit installer test CA\)\./),
      ]);
      expect((await runOnConsumers(connection, trustTask([depot.certPem]))).ok).toBe(true);
      // Every session (two commands, six runs in-process) was revoked at its end, and no password reached a log.
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
      vi.stubEnv('FLEET_PASSWORD', PASSWORD);

      const spec = { url: `https://localhost:${depot.port}`, username: DEPOT_USER, password: DEPOT_PASSWORD };
      const first = await runOnConsumers({ inventory, concurrency: 2 }, connectTask(spec, { caPems: await readCaPems([caDir]) }));
      expect(first.ok).toBe(false);
      expect(first.warnings).toEqual([expect.stringContaining(`${wrong} is readable by others (mode 0644); run chmod 600 ${wrong}.`)]);
      expect(first.rows.map((r) => [r.name, r.ok])).toEqual([
        ['site-0', true],
        ['site-1', true],
        ['site-2', true],
        ['site-wrong', false],
        ['site-down', false],
      ]);
      expect(first.rows[0]!.result).toMatchObject({ action: 'updated', status: 'DEPOT_CONNECTION_SUCCESSFUL', trusted: [{ action: 'imported' }] });
      expect(first.rows[3]!.error).toMatchObject({
        errorCode: 'INVALID_CREDENTIALS',
        message: 'Log-in failed: INVALID_CREDENTIALS: Invalid username or password.',
      });
      expect(first.rows[4]!.error!.message).toMatch(/^Cannot reach the installer 127\.0\.0\.1:\d+: the connection was refused \(ECONNREFUSED\)\.$/);

      // The re-run through the command line: its flags for a fleet, its rows and its count.
      const human = await runCli(
        [
          'installer',
          'depot',
          '--inventory',
          inventory,
          '--concurrency',
          '2',
          '--trust-ca',
          caDir,
          '--depot-url',
          spec.url,
          '--depot-user',
          DEPOT_USER,
          '--depot-password-env',
          'FLEET_DEPOT_PASSWORD',
        ],
        { env: { FLEET_PASSWORD: PASSWORD, FLEET_DEPOT_PASSWORD: DEPOT_PASSWORD } },
      );
      expect(human.code).toBe(1);
      expect(human.stderr).toContain(`${wrong} is readable by others (mode 0644); run chmod 600 ${wrong}.`);
      expect(human.stdout).toMatch(/^site-0 {2}VcfInstaller 9\.\S+ {2}ok {2}depot localhost:\d+: DEPOT_CONNECTION_SUCCESSFUL \(already set, nothing sent\)$/m);
      expect(human.stdout).toMatch(/^site-wrong {2}FAILED {2}Log-in failed: INVALID_CREDENTIALS/m);
      expect(human.stdout).toContain('5 consumers: 3 ok, 2 failed.');
      for (const sim of sims.slice(0, 3)) {
        expect(sim.logs.filter((l) => l.includes('POST /v1/sddc-manager/trusted-certificates 200'))).toHaveLength(1);
        expect(sim.logs.filter((l) => l.includes('PUT /v1/system/settings/depot 202'))).toHaveLength(1);
      }

      const status = await runOnConsumers({ inventory }, statusTask());
      expect(status.rows.filter((r) => r.ok)).toHaveLength(3);
    } finally {
      vi.unstubAllEnvs();
      await Promise.all(sims.map((s) => s.close()));
    }
  });

  it('refuses bad usage with exit 2 and one sentence, and warns about --insecure', async () => {
    const sim = await startSim();
    const depotOn = (...more: string[]) => ['installer', 'depot', '--installer', sim.url, '--password-file', files.password, '--insecure', ...more];
    try {
      const none = await runCli(['installer', 'status', '--password-file', files.password]);
      expect(none.code).toBe(2);
      expect(none.stderr).toContain('Give one installer with --installer URL, or a fleet with --inventory FILE.');

      // The built CLI once (above); the CLI's main in this process for the other refusals.
      const both = await runMain(depotOn('--depot-url', 'https://a', '--depot-host', 'a'));
      expect(both.code).toBe(2);

      // Depot credentials never go over plain HTTP: refused before anything is sent.
      const clear = await runMain(depotOn('--depot-url', 'http://depot.lab/', '--depot-user', DEPOT_USER, '--depot-password-file', files.depotPassword));
      expect(clear.code).toBe(2);
      expect(clear.stderr).toContain('Depot credentials go only over HTTPS; http://depot.lab/ is plain HTTP.');
      expect(sim.logs.some((l) => l.includes('POST /v1/tokens'))).toBe(false);

      const infoReads = () => sim.logs.filter((l) => l.includes('GET /v1/system/appliance-info')).length;
      const insecure = await runCli(['installer', 'status', '--installer', sim.url, '--password-file', files.password, '--insecure']);
      expect(insecure.code).toBe(0);
      expect(insecure.stderr).toMatch(/^warning: not verifying the installer's certificate \(--insecure\)/m);
      expect(insecure.stdout).toMatch(/ {2}VcfInstaller 9\.1\.\S+ {2}ok {2}depot: not configured/);
      expect(insecure.stdout + insecure.stderr).not.toContain(PASSWORD);
      // The command's one session reads appliance-info once: its row and its status share the answer.
      expect(infoReads()).toBe(1);
    } finally {
      await sim.close();
    }
  });

  it('refuses, in the library, what the command line refuses with exit 2, in the words the command line prints', async () => {
    const sim = await startSim();
    try {
      const usage = async (work: Promise<unknown>) => {
        const err = (await work.then(
          () => undefined,
          (e: unknown) => e,
        )) as (Error & { fix?: string }) | undefined;
        expect(err).toBeInstanceOf(DepotkitError);
        expect((err as DepotkitError).exitCode).toBe(EXIT.usage);
        return asCommandLine(`${err!.message} ${err!.fix ?? ''}`);
      };
      expect(await usage(runOnConsumers({ installer: sim.url, insecure: true }, statusTask()))).toContain(`No password source for ${USER}`);

      const leaky = join(tmp.dir, 'leaky.yaml');
      await writeFile(leaky, `installers:\n  - url: ${sim.url}\n    password: hunter2\n`);
      const leak = await usage(runOnConsumers({ inventory: leaky }, statusTask()));
      expect(leak).toMatch(/installer 1 of .*leaky\.yaml holds a password; inventories name where passwords are/);
      expect(leak).not.toContain('hunter2');

      // A URL ending in /PROD would replace a working setting with a broken one: refused, naming the URL to use.
      const prod = await usage(Promise.resolve().then(() => checkDepotSpec({ url: 'https://depot.lab.local:8443/PROD/', username: DEPOT_USER })));
      expect(prod).toContain('The depot URL https://depot.lab.local:8443/PROD/ ends in /PROD');
      expect(prod).toContain('Use --depot-url https://depot.lab.local:8443');
      expect(sim.logs.some((l) => l.includes('POST /v1/tokens'))).toBe(false);

      // Not trusted: the row fails, its fix naming the flag that gives the installer's CA.
      const untrusted = await runOnConsumers({ installer: sim.url, passwordFile: files.password }, statusTask());
      expect(untrusted.ok).toBe(false);
      expect(untrusted.rows[0]!.error!.message).toMatch(/presented a certificate this client does not trust/);
      expect(asCommandLine(untrusted.rows[0]!.error!.fix)).toContain('--installer-ca FILE');
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
      const child = spawnCli(['installer', 'status', '--installer', url, '--password-file', files.password, '--insecure']);
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

  it('--no-sync: the built installer depot has the installer accept the depot and sends it no sync request', async () => {
    const sim = await startSim();
    try {
      // The CLI's main in this process: its flags and its --json, without a process of its own.
      const connected = await runMain([...(await onSim(sim)), ...depotFlags(), '--trust-ca', files.depotCa, '--no-sync', '--json']);
      expect(connected.code, connected.stderr).toBe(0);
      const row = (JSON.parse(connected.stdout) as Rows).installers[0]!;
      expect(row.result).toMatchObject({ ok: true, status: 'DEPOT_CONNECTION_SUCCESSFUL' });
      expect(row.result).not.toHaveProperty('sync');
      // Without the flag the command patches the sync info and waits for SYNCED.
      expect(sim.logs.filter((l) => l.includes(`PUT ${INSTALLER_API.depotSettings} 202`))).toHaveLength(1);
      expect(sim.logs.filter((l) => l.includes(` ${INSTALLER_API.depotSyncInfo} `))).toEqual([]);
    } finally {
      await sim.close();
    }
  });

  it("--expiry-warn-days: a threshold above the depot CA's days left fails the built installer status row (exit 1), the default passes it", async () => {
    const sim = await startSim();
    try {
      const connection = await connectionTo(sim, 'expiry');
      const spec = depotSpec();
      expect((await runOnConsumers(connection, connectTask(spec, { caPems: [depot.ca.certPem], sync: false }))).ok).toBe(true);
      const caDays = daysLeft({ notAfter: new Date(new X509Certificate(depot.ca.certPem).validTo) });
      // The built CLI by default, the CLI's main in this process with the threshold.
      const args = (...more: string[]) => ['installer', 'status', ...onInstaller(connection), '--ca', files.depotCa, ...more, '--json'];
      const status = (...more: string[]) => (more.length ? runMain(args(...more)) : runCli(args()));
      const byDefault = await status();
      expect(byDefault.code, byDefault.stderr).toBe(0);
      expect((JSON.parse(byDefault.stdout) as Rows).installers[0]!.result!.depotCa).toMatchObject({ present: true, daysLeft: caDays });
      const soon = await status('--expiry-warn-days', String(caDays + 1));
      expect(soon.code).toBe(1);
      const row = (JSON.parse(soon.stdout) as Rows).installers[0]!;
      expect([row.ok, row.result!.depotCa]).toEqual([false, expect.objectContaining({ present: true, daysLeft: caDays, flag: 'expiring' })]);
    } finally {
      await sim.close();
    }
  });

  it('--component: the built installer download has the installer fetch the bundles of that component only', async () => {
    const sim = await startSim();
    try {
      const connection = await connectionTo(sim, 'component');
      const spec = depotSpec();
      // Accepted and synced in-process: the release's components are known to the installer.
      const synced = await runOnConsumers(connection, connectTask(spec, { caPems: [depot.ca.certPem] }));
      expect(synced.ok, JSON.stringify(synced.rows)).toBe(true);
      const root = join(tmp.dir, 'depot');
      const release = (JSON.parse(await readFile(join(root, DEPOT_PATHS.manifest), 'utf8')) as { releases: Array<{ version: string }> }).releases[0]!.version;
      const components = Object.keys((JSON.parse(await readFile(join(root, DEPOT_PATHS.catalog), 'utf8')) as { patches: object }).patches);
      expect(components.length).toBeGreaterThan(1);
      const chosen = components[0]!;
      const download = await runMain(['installer', 'download', ...onInstaller(connection), '--release', release, '--component', chosen, '--json']);
      expect(download.code, download.stderr).toBe(0);
      const bundles = (JSON.parse(download.stdout) as Rows).installers[0]!.result!.bundles as Array<{ component: string; status: string }>;
      expect(bundles.length).toBeGreaterThan(0);
      expect(bundles.map((b) => [b.component, b.status])).toEqual(bundles.map(() => [chosen, 'SUCCESS']));
      // What the installer fetched from the depot: that component's files, no other's.
      const fetched = sim.logs.filter((l) => /BundleDownloadService\] GET https:.*\/PROD\/COMP\//.test(l));
      expect(fetched.length).toBeGreaterThan(0);
      expect(fetched.filter((l) => !l.includes(`/PROD/COMP/${chosen}/`))).toEqual([]);
    } finally {
      await sim.close();
    }
  });

  it('depotkit sim installer --user NAME without a password file lets NAME log in with the lab password', async () => {
    const certOut = join(tmp.dir, 'cli-sim-user.pem');
    const labPassword = join(tmp.dir, 'lab-password');
    await writeFile(labPassword, 'VMware1!VMware1!\n', { mode: 0o600 });
    const sim = await spawnCliJson<{ url: string; user: string }>(['sim', 'installer', '--user', 'ops@lab', '--cert-out', certOut, '--quiet', '--json']);
    try {
      const { url, user } = sim.info;
      expect(user).toBe('ops@lab');
      const connection = { installer: url, installerCa: certOut, passwordFile: labPassword };
      expect((await runOnConsumers({ ...connection, user: 'ops@lab' }, statusTask())).ok).toBe(true);
      expect((await runOnConsumers({ ...connection, user: 'admin@local' }, statusTask())).ok).toBe(false);
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
      const trust = await runOnConsumers({ installer: sim.info.url, passwordFile: files.password, installerCa: certOut }, trustTask([depot.ca.certPem]));
      expect(trust.ok).toBe(true);
      expect(JSON.parse(await readFile(state, 'utf8'))).toMatchObject({ version: 1, trustedCertificates: [{ usage: 'TRUSTED_FOR_OUTBOUND' }] });
      expect(sim.stderr()).toContain('POST /v1/sddc-manager/trusted-certificates 200');
    } finally {
      sim.child.kill('SIGTERM');
    }
    expect(await sim.exited).toBe(0);
    expect(sim.stderr()).not.toContain(PASSWORD);
  });
});
