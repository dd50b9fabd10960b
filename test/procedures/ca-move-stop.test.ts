import { spawn } from 'node:child_process';
import { chmod, chown, copyFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INSTALLER_API, type ExportTarget } from '../../src/constants.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { moveDepotCa, type CaMoveOptions, type CaMoveReport } from '../../src/procedures/index.js';
import { startInstallerSimulator, type InstallerSimulator } from '../../src/simulators/installer/index.js';
import { CLI, runCli, spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { until } from '../helpers/poll.js';
import { PASSWORD, USER } from '../installer/helpers.js';
import { closedPort } from '../helpers/ports.js';

const PASSWORD_ENV = 'DEPOTKIT_TEST_CONSUMER_PASSWORD';
const env = { [PASSWORD_ENV]: PASSWORD };

describe('depotkit depot move-ca: where the move stops', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let pair: string[];
  let depotUrl: string;
  beforeAll(async () => {
    tmp = await tempDir('depotkit-ca-move-stop-');
    const newCa = await createCa({ cn: 'New Depot CA' });
    const leaf = await issueServerCert(newCa, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
    const file = (name: string) => join(tmp.dir, name);
    await Promise.all([
      writeFile(file('new-cert.pem'), leaf.certPem),
      writeFile(file('new-key.pem'), leaf.keyPem, { mode: 0o600 }),
      writeFile(file('new-ca.pem'), newCa.certPem),
    ]);
    depotUrl = `https://127.0.0.1:${await closedPort()}`;
    // For the moves run through the library, whose inventory entries name the variable.
    process.env[PASSWORD_ENV] = PASSWORD;
    pair = ['--cert', file('new-cert.pem'), '--key', file('new-key.pem'), '--new-ca', file('new-ca.pem'), '--depot-url', depotUrl];
  }, 60_000);
  afterAll(async () => tmp.cleanup());

  /** The move's arguments for one consumer at `url`, its served pair and state in `site`. */
  async function moveArgs(site: string, url: string): Promise<string[]> {
    const inventory = join(tmp.dir, `${site}.yaml`);
    await writeFile(inventory, `installers:\n  - { name: consumer-0, url: "${url}", user: ${USER}, passwordEnv: ${PASSWORD_ENV}, insecure: true }\n`);
    const served = ['--served-cert', join(tmp.dir, `${site}-cert.pem`), '--served-key', join(tmp.dir, `${site}-key.pem`)];
    return ['depot', 'move-ca', ...pair, ...served, '--inventory', inventory, '--state-file', join(tmp.dir, `${site}-state.json`)];
  }

  /** The same move through the library, its served pair and state in `site`, the site of `server`'s kind. */
  function moveOptions(site: string, url: string, server?: ExportTarget): CaMoveOptions {
    const file = (name: string) => join(tmp.dir, name);
    return {
      newCert: file('new-cert.pem'),
      newKey: file('new-key.pem'),
      newCa: file('new-ca.pem'),
      served: { kind: 'site', certFile: file(`${site}-cert.pem`), keyFile: file(`${site}-key.pem`), ...(server ? { server } : {}) },
      depot: { url: depotUrl },
      consumers: [{ name: 'consumer-0', url, user: USER, passwordEnv: PASSWORD_ENV, insecure: true }],
      stateFile: file(`${site}-state.json`),
      concurrency: 1,
      timeoutMs: 10_000,
    };
  }

  describe('an exported site with no reload command', () => {
    let sim: InstallerSimulator;
    beforeAll(async () => {
      sim = await startInstallerSimulator({ users: { [USER]: PASSWORD } });
    });
    afterAll(async () => sim.close());

    it("names the reload command of the site's kind, in the lines and in the JSON report", async () => {
      const nginx = await runCli([...(await moveArgs('nginx', sim.url)), '--site', 'nginx'], { env });
      expect(nginx.code, nginx.stderr).toBe(1);
      expect(nginx.stdout).toContain('Stopped. Reload the server (nginx: nginx -t && systemctl reload nginx), then run the move again.');
      expect(nginx.stdout).toMatch(/^ {2}nginx -t && systemctl reload nginx$/m);

      const unit = await runCli([...(await moveArgs('unit', sim.url)), '--site', 'systemd', '--unit', 'depot-a', '--json'], { env });
      expect(unit.code, unit.stderr).toBe(1);
      const report = JSON.parse(unit.stdout) as CaMoveReport;
      expect(report.reload).toEqual([{ server: 'systemd', command: 'systemctl reload depot-a' }]);
      expect(report.next).toContain('systemctl reload depot-a');
      expect(report.phases.find((p) => p.phase === 'switch')).toMatchObject({ ok: false, note: 'reload-needed' });
    }, 60_000);

    it("writes the new pair with the owner and group of the files it replaces, the key group-readable only if it was: the server's user still reads it", async () => {
      // The export's steps give the key to the server's group, 0640 (Caddy runs as its own user); root may give any group.
      const gid = process.getuid?.() === 0 ? 4242 : (process.getgroups?.().find((g) => g !== process.getgid?.()) ?? process.getgid!());
      const file = (name: string) => join(tmp.dir, name);
      await writeFile(file('grouped-cert.pem'), 'old certificate\n', { mode: 0o644 });
      await writeFile(file('grouped-key.pem'), 'old key\n', { mode: 0o600 });
      await chown(file('grouped-key.pem'), -1, gid);
      await chmod(file('grouped-key.pem'), 0o640);
      await chown(file('grouped-cert.pem'), -1, gid);
      await writeFile(file('private-cert.pem'), 'old certificate\n', { mode: 0o644 });
      await writeFile(file('private-key.pem'), 'old key\n', { mode: 0o644 });
      for (const site of ['grouped', 'private']) {
        const moved = await moveDepotCa(moveOptions(site, sim.url, 'caddy'));
        expect(moved.ok).toBe(false);
        expect(moved.next).toMatch(/^Reload the server/);
      }
      const [key, cert, privateKey] = await Promise.all([stat(file('grouped-key.pem')), stat(file('grouped-cert.pem')), stat(file('private-key.pem'))]);
      expect(await readFile(file('grouped-key.pem'), 'utf8')).toMatch(/PRIVATE KEY/);
      expect([key.mode & 0o777, key.gid, key.uid]).toEqual([0o640, gid, process.getuid?.()]);
      expect([cert.mode & 0o777, cert.gid]).toEqual([0o644, gid]);
      // A key others could read becomes the owner's alone (and its group's): never readable by all.
      expect(privateKey.mode & 0o777).toBe(0o640);
    }, 60_000);

    it.runIf(process.getuid?.() === 0)(
      'run by a user who cannot give the new pair the owner and group of the files it replaces, stops before it writes (exit 3)',
      async () => {
        // A folder that user may write in, the served pair root's as the export's steps leave it, the new pair readable.
        const dir = join(tmp.dir, 'shared');
        await chmod(tmp.dir, 0o711);
        await mkdir(dir);
        await chmod(dir, 0o777);
        const file = (name: string) => join(dir, name);
        await Promise.all([
          writeFile(file('cert.pem'), 'old certificate\n', { mode: 0o644 }),
          writeFile(file('key.pem'), 'old key\n', { mode: 0o640 }),
          ...['new-cert.pem', 'new-key.pem', 'new-ca.pem'].map((name) => copyFile(join(tmp.dir, name), file(name))),
        ]);
        await Promise.all(['new-cert.pem', 'new-key.pem', 'new-ca.pem'].map((name) => chmod(file(name), 0o644)));
        await writeFile(
          file('inventory.yaml'),
          `installers:\n  - { name: consumer-0, url: "${sim.url}", user: ${USER}, passwordEnv: ${PASSWORD_ENV}, insecure: true }\n`,
        );
        const args = [
          'depot',
          'move-ca',
          '--cert',
          file('new-cert.pem'),
          '--key',
          file('new-key.pem'),
          '--new-ca',
          file('new-ca.pem'),
          '--depot-url',
          depotUrl,
        ];
        const served = ['--served-cert', file('cert.pem'), '--served-key', file('key.pem'), '--state-file', file('state.json'), '--site', 'caddy'];
        const moved = await new Promise<{ code: number | null; out: string }>((resolve) => {
          const child = spawn('runuser', [
            '-u',
            'nobody',
            '--',
            'env',
            `${PASSWORD_ENV}=${PASSWORD}`,
            process.execPath,
            CLI,
            ...args,
            ...served,
            '--inventory',
            file('inventory.yaml'),
          ]);
          let out = '';
          child.stdout.on('data', (d: Buffer) => (out += d.toString()));
          child.stderr.on('data', (d: Buffer) => (out += d.toString()));
          child.on('close', (code) => resolve({ code, out }));
        });
        expect(moved.code, moved.out).toBe(3);
        expect(moved.out).toContain(`${file('key.pem')} belongs to uid 0 and gid 0, which this process`);
        expect(moved.out).toContain("Run as root or as the file's owner, in its group.");
        expect(await readFile(file('key.pem'), 'utf8')).toBe('old key\n');
        expect(await readFile(file('cert.pem'), 'utf8')).toBe('old certificate\n');
        expect((await readdir(dir)).filter((name) => name.includes('.bak') || name.startsWith('.depotkit-tmp'))).toEqual([]);
      },
      60_000,
    );

    it('without the kind, names the reload of each kind an export writes', async () => {
      const report = await moveDepotCa(moveOptions('any', sim.url));
      expect(report.ok).toBe(false);
      expect(report.reload?.map((r) => r.server)).toEqual(['nginx', 'apache', 'caddy', 'systemd']);
      expect(report.reload?.find((r) => r.server === 'caddy')?.command).toMatch(/caddy validate --config \/etc\/caddy\/Caddyfile .*&& systemctl reload caddy/);
      expect(report.reload?.find((r) => r.server === 'systemd')?.command).toBe('systemctl reload depotkit');
    }, 60_000);
  });

  describe('an interruption', () => {
    let consumer: Server;
    const seen: string[] = [];
    let slowLogIn = false;
    beforeAll(async () => {
      const cert = await issueServerCert(await createCa({ cn: 'Consumer CA' }), { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
      // A consumer that logs in at once and then never answers: the move holds its session when the interruption comes.
      consumer = createHttpsServer({ key: cert.keyPem, cert: cert.certPem }, (req, res) => {
        // With slowLogIn, the log-in is answered a second late: the interruption arrives before the tokens.
        seen.push(`${req.method} ${req.url}`);
        req.resume();
        if (req.url === INSTALLER_API.tokens) {
          const answer = () => {
            res.writeHead(201, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ accessToken: 'x.y.z', refreshToken: { id: 'r-1' } }));
          };
          if (slowLogIn) setTimeout(answer, 1000);
          else answer();
        } else if (req.method === 'DELETE') {
          res.writeHead(204);
          res.end();
        }
      });
      await new Promise<void>((resolve) => consumer.listen(0, '127.0.0.1', resolve));
    });
    afterAll(() => {
      consumer.closeAllConnections();
      consumer.close();
    });

    it("revokes the consumers' sessions the move holds, keeps its state for a re-run and exits 130", async () => {
      const url = `https://127.0.0.1:${(consumer.address() as AddressInfo).port}`;
      const child = spawnCli([...(await moveArgs('stopped', url)), '--reload-command', 'true'], { env });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      // Bounded by the command's start, which takes more than 10 s under a load of 20 on 2 cores.
      await until(() => seen.includes(`GET ${INSTALLER_API.applianceInfo}`), 'the first request after the log-in', { timeoutMs: 60_000 });
      child.kill('SIGINT');
      expect(await exited, stderr).toBe(130);
      expect(seen).toContain(`DELETE ${INSTALLER_API.refreshToken}`);
      expect(stderr).toMatch(
        /interrupted: The move was interrupted during its import phase; its progress is kept in .*stopped-state\.json\. Run the same command again/,
      );
      // The state is whole (no temporary file beside it) and names this move: a re-run carries on from it.
      const state = JSON.parse(await readFile(join(tmp.dir, 'stopped-state.json'), 'utf8')) as { version: number; revalidated: string[]; switched?: string };
      expect(state).toMatchObject({ version: 1, revalidated: [] });
      expect(state.switched).toBeUndefined();
      expect((await readdir(tmp.dir)).filter((f) => f.startsWith('stopped-state') && f !== 'stopped-state.json')).toEqual([]);
    }, 120_000);

    it('revokes the session of a log-in it catches under way', async () => {
      seen.length = 0;
      slowLogIn = true;
      const url = `https://127.0.0.1:${(consumer.address() as AddressInfo).port}`;
      const child = spawnCli([...(await moveArgs('log-in', url)), '--reload-command', 'true'], { env, output: 'ignore' });
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      await until(() => seen.length > 0, 'the log-in request', { timeoutMs: 60_000 });
      child.kill('SIGTERM');
      expect(await exited).toBe(130);
      expect(seen).toEqual([`POST ${INSTALLER_API.tokens}`, `DELETE ${INSTALLER_API.refreshToken}`]);
    }, 120_000);
  });
});
