import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { runCli } from '../helpers/cli.js';
import { REPO_ROOT, tempDir } from '../helpers/temp.js';
import { runBash, setVariables, shBlockAfter, writeDepotkitShim } from '../helpers/readme.js';
import { freePorts } from '../helpers/ports.js';

const run = promisify(execFile);
const { version } = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
/** Written by `npm run package` (CI builds it before the tests); without it these tests are skipped. */
const BUILT_EXE = join(REPO_ROOT, 'release', `depotkit-${version}-linux-x64`);
const BUILT = existsSync(BUILT_EXE);
/** A copy away from the repository, as on a host where it is the only depotkit file: node_modules/ is not next door. */
let EXE: string;

let dir: string;
let cleanup: () => Promise<void>;
/** No Node anywhere on the PATH: the executable must need none. */
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('depotkit-exe-'));
  const emptyBin = join(dir, 'bin');
  await mkdir(emptyBin);
  env = { PATH: emptyBin, HOME: dir, LANG: 'C' };
  EXE = join(dir, 'depotkit');
  if (BUILT) {
    await copyFile(BUILT_EXE, EXE);
    await chmod(EXE, 0o755);
  }
});
afterAll(() => cleanup?.());

function exe(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(EXE, args, { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
  );
}

describe.skipIf(!BUILT)('the single executable (release/depotkit-<version>-linux-x64), with no Node on the PATH', () => {
  it("names itself and the runtime it embeds: a Node 24 LTS, not the build machine's", async () => {
    const r = await exe(['--version']);
    expect(r.stdout).toMatch(new RegExp(`^depotkit ${version.replace(/\./g, '\\.')} \\(node v24\\.\\d+\\.\\d+\\)\\n$`));
    expect((await exe(['-V'])).stdout).toBe(r.stdout);
    await expect(run('sh', ['-c', 'command -v node'], { env })).rejects.toThrow();
  });

  it('gives help and exits 2 with one sentence on bad usage, as the CLI does', async () => {
    expect((await exe(['--help'])).stdout).toContain('export');
    const bad = await exe(['depot', 'verify', join(dir, 'nowhere')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });

  it('makes a demo depot and verifies it deeply (hashing on worker threads)', async () => {
    expect((await exe(['depot', 'demo', 'depot', '--binary-size', '256K'])).code).toBe(0);
    const verify = await exe(['depot', 'verify', 'depot', '--deep', '--json']);
    expect(verify.code, verify.stderr).toBe(0);
    const report = JSON.parse(verify.stdout) as { errors?: unknown[] };
    expect(JSON.stringify(report)).toMatch(/"hashed":\s*16/);
  });

  it('serves with forked workers (serve --workers 2) and bcrypt users (checked on worker threads): curl downloads with credentials, check accepts, SIGTERM stops', async () => {
    if (!existsSync(join(dir, 'depot'))) expect((await exe(['depot', 'demo', 'depot', '--binary-size', '256K'])).code).toBe(0);
    expect((await exe(['cert', 'ca', '--out', 'pki/ca', '--key-size', '2048'])).code).toBe(0);
    expect((await exe(['cert', 'issue', '--ca', 'pki/ca', '--dns', 'depot.test', '--ip', '127.0.0.1', '--out', 'pki/server'])).code).toBe(0);
    await writeFile(join(dir, 'pass'), 'Dep0t-Secret\n', { mode: 0o600 });
    await writeFile(join(dir, 'users.htpasswd'), `depot:${bcrypt.hashSync('Dep0t-Secret', 8)}\n`, { mode: 0o600 });
    const serve = spawn(
      EXE,
      [
        'serve',
        'depot',
        '--host',
        '127.0.0.1',
        '--port',
        '0',
        '--workers',
        '2',
        '--cert',
        'pki/server/server-chain.pem',
        '--key',
        'pki/server/server-key.pem',
        '--htpasswd',
        'users.htpasswd',
        '--open-hcl',
        '--json',
      ],
      { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exited = new Promise<number | null>((resolve) => serve.once('exit', resolve));
    try {
      const info = await new Promise<{ port: number; workers: number; pid: number }>((resolve, reject) => {
        let out = '';
        serve.stdout.setEncoding('utf8').on('data', (d: string) => {
          out += d;
          try {
            resolve(JSON.parse(out) as { port: number; workers: number; pid: number });
          } catch {
            // Not the whole JSON yet.
          }
        });
        void exited.then((code) => reject(new Error(`serve exited with ${code}`)));
      });
      expect(info.workers).toBe(2);
      // The worker is this same executable, forked.
      const { stdout: children } = await run('ps', ['-o', 'args=', '--ppid', String(info.pid)]);
      expect(
        children
          .trim()
          .split('\n')
          .filter((l) => l.startsWith(EXE)),
      ).toHaveLength(1);
      const url = `https://127.0.0.1:${info.port}`;
      const curl = (args: string[]) => run('curl', ['-sS', '--cacert', join(dir, 'pki/ca/ca-cert.pem'), ...args]).then((r) => r.stdout);
      // Several connections, so that both serving processes answer some.
      for (let i = 0; i < 4; i++) {
        expect(await curl(['-o', '/dev/null', '-w', '%{http_code}', '-I', '-u', 'depot:Dep0t-Secret', `${url}/${DEPOT_PATHS.catalog}`])).toBe('200');
      }
      expect(await curl(['-o', '/dev/null', '-w', '%{http_code}', '-I', `${url}/${DEPOT_PATHS.catalog}`])).toBe('401');
      expect(await curl(['-o', '/dev/null', '-w', '%{http_code}', '-I', '-u', 'depot:wrong', `${url}/${DEPOT_PATHS.catalog}`])).toBe('401');
      expect(await curl(['-o', '/dev/null', '-w', '%{http_code}', `${url}/${DEPOT_PATHS.hclAll}`])).toBe('200');
      const check = await exe(['check', url, '--as-host', 'depot.test', '--ca', 'pki/ca/ca-cert.pem', '--user', 'depot', '--password-file', 'pass', '--deep']);
      expect(check.code, check.stdout).toBe(0);
    } finally {
      serve.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });

  it('exports the same configurations as the CLI under Node: the templates travel inside', async () => {
    if (!existsSync(join(dir, 'pki/server'))) return;
    const tls = ['--cert', join(dir, 'pki/server/server-chain.pem'), '--key', join(dir, 'pki/server/server-key.pem')];
    const extra: Record<string, string[]> = { nginx: [], apache: [], caddy: ['--caddy-version', '2.6.2'], systemd: ['--exec', '/usr/local/bin/depotkit'] };
    for (const [server, more] of Object.entries(extra)) {
      const fromExe = await exe(['export', server, join(dir, 'depot'), ...tls, ...more, '--out', join(dir, `exe-${server}`)]);
      expect(fromExe.code, fromExe.stderr).toBe(0);
    }
    const fromNode = await runCli(['export', 'nginx', join(dir, 'depot'), ...tls, '--out', join(dir, 'node-nginx')]);
    expect(fromNode.code, fromNode.stderr).toBe(0);
    expect(await readFile(join(dir, 'exe-nginx', 'depotkit.conf'), 'utf8')).toBe(await readFile(join(dir, 'node-nginx', 'depotkit.conf'), 'utf8'));
    expect(await readFile(join(dir, 'exe-systemd', 'depotkit.service'), 'utf8')).toMatch(/^ExecStart="\/usr\/local\/bin\/depotkit" serve /m);
    // Without --exec, the unit runs the executable that wrote it.
    const own = await exe(['export', 'systemd', join(dir, 'depot'), ...tls, '--out', join(dir, 'exe-systemd-own')]);
    expect(own.code, own.stderr).toBe(0);
    expect(await readFile(join(dir, 'exe-systemd-own', 'depotkit.service'), 'utf8')).toContain(`ExecStart="${EXE}" serve "${join(dir, 'depot')}"`);
  });

  it("runs the README's rehearsal as written, with the executable as depotkit: serve, check, the installer and management simulators, installer depot, mgmt replace-cert", async () => {
    const block = await shBlockAfter('README.md', '## Rehearsal: the whole flow on one machine');
    const [depot, installer, vc] = await freePorts(3);
    const work = join(dir, 'rehearsal');
    const bin = join(dir, 'rehearsal-bin');
    await mkdir(bin, { recursive: true });
    // Only the shell tools the block uses, and `depotkit` the executable: no Node.
    for (const tool of ['curl', 'mkdir', 'rm', 'chmod', 'sleep']) await symlink((await run('sh', ['-c', `command -v ${tool}`])).stdout.trim(), join(bin, tool));
    await writeDepotkitShim(bin, [EXE]);
    const script = setVariables(block, { work, depot_port: depot, installer_port: installer, vc_port: vc });
    const { code, stdout, stderr } = await runBash(script, { cwd: dir, env: { ...env, PATH: bin }, seconds: 180, file: join(dir, 'rehearsal.sh') });
    expect(code, `the rehearsal stopped (exit ${code}):\n${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toMatch(/ACCEPT/);
    expect(stdout).toContain(`depot depot.lab.local:${depot}: DEPOT_CONNECTION_SUCCESSFUL`);
    expect(stdout).toMatch(/Replaced the certificate of https:\/\/127\.0\.0\.1:\d+ [\s\S]*verified: trusted by the CA/);
  }, 240_000);
});
