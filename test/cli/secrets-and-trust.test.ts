import { execFileSync, spawn } from 'node:child_process';
import { chmod, copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCaPems } from '../../src/cert/trust-source.js';
import { checkDepot } from '../../src/check/check.js';
import { DEPOT_PATHS } from '../../src/constants.js';
import { exposedFileWarning } from '../../src/util/fs.js';
import type { DepotServer } from '../../src/server/index.js';
import { CLI, runCli, spawnCliJson } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/temp.js';
import { basic, fetchRaw } from '../server/helpers.js';
import { DEPOT_PASSWORD, DEPOT_USER, useServedFixture, withoutNpm, type CliFixture } from './fixtures.js';

const HAS_PYTHON = (() => {
  try {
    execFileSync('python3', ['-c', 'import pty'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/**
 * Runs the built CLI on a real terminal (a pty from Python's pty module),
 * answers its password prompt with $ANSWER, and resolves with everything the
 * terminal showed and the exit code.
 */
function runOnTerminal(args: string[], answer: string, enter = '\r'): Promise<{ code: number; screen: string }> {
  const script = [
    'import os, pty, sys',
    'pid, fd = pty.fork()',
    'if pid == 0:',
    '    os.execv(sys.argv[1], sys.argv[1:])',
    'buf = b""',
    'while b"Password of" not in buf:',
    '    buf += os.read(fd, 1024)',
    'os.write(fd, (os.environ["ANSWER"] + os.environ["ENTER"]).encode())',
    'while True:',
    '    try:',
    '        d = os.read(fd, 4096)',
    '    except OSError:',
    '        break',
    '    if not d:',
    '        break',
    '    buf += d',
    '_, status = os.waitpid(pid, 0)',
    'sys.stdout.write(buf.decode(errors="replace"))',
    'sys.exit(os.waitstatus_to_exitcode(status))',
  ].join('\n');
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-c', script, process.execPath, CLI, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...withoutNpm(), ANSWER: answer, ENTER: enter },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let screen = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (screen += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, screen }));
  });
}

describe('passwords from a file, a variable or a terminal; trust from a CA file or folder', () => {
  const served = useServedFixture('depotkit-cli-secrets-');
  let f: CliFixture;
  let server: DepotServer;
  beforeAll(() => {
    f = served.fixture();
    server = served.server();
  });

  const localUrl = () => server.url.replace('127.0.0.1', 'localhost');

  it('serve takes the password from --password-env', async () => {
    const serve = await spawnCliJson<{ url: string }>(
      [
        'serve',
        f.depot,
        '--cert',
        f.chainFile,
        '--key',
        f.keyFile,
        '--host',
        '127.0.0.1',
        '--port',
        '0',
        '--workers',
        '1',
        '--user',
        DEPOT_USER,
        '--password-env',
        'DEPOT_PW',
        '--json',
      ],
      {
        env: { DEPOT_PW: DEPOT_PASSWORD },
      },
    );
    try {
      const catalog = `/${DEPOT_PATHS.catalog}`;
      const ok = await fetchRaw(serve.info.url, catalog, { method: 'HEAD', ca: f.ca.certPem, headers: { Authorization: basic(DEPOT_USER, DEPOT_PASSWORD) } });
      const refused = await fetchRaw(serve.info.url, catalog, { method: 'HEAD', ca: f.ca.certPem, headers: { Authorization: basic(DEPOT_USER, 'wrong') } });
      expect(refused.status).toBe(401);
      expect(ok.status).toBe(200);
      expect(serve.stderr()).not.toContain('readable by');
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });

  it('warns about a password file others or the group can read, as about a CA key', async () => {
    const shared = join(f.dir, 'shared-password');
    await copyFile(f.passwordFile, shared);
    await chmod(shared, 0o644);
    const others = await runCli(['check', localUrl(), '--ca', f.caDir, '--user', DEPOT_USER, '--password-file', shared], { env: withoutNpm() });
    expect(others.code).toBe(0);
    expect(others.stderr).toContain(`warning: ${shared} is readable by others (mode 0644); run chmod 600 ${shared}.`);
    // The sentence the command prints after "warning: " is exposedFileWarning's; a file of mode 0600 gets
    // none, and check prints no warning at all then (the CA folder test below runs it so).
    await chmod(shared, 0o640);
    expect(await exposedFileWarning(shared)).toBe(`${shared} is readable by its group (mode 0640); run chmod 600 ${shared}.`);
    expect(await exposedFileWarning(f.passwordFile)).toBeUndefined();
  });

  it.skipIf(!HAS_PYTHON)('asks on a terminal when neither a file nor a variable is given, without echoing', async () => {
    const r = await runOnTerminal(['check', localUrl(), '--ca', f.caDir, '--user', DEPOT_USER], DEPOT_PASSWORD);
    expect(r.screen).toContain(`Password of depot user ${DEPOT_USER}:`);
    expect(r.screen).toContain('ACCEPT: the installer would accept this depot');
    expect(r.screen).not.toContain(DEPOT_PASSWORD);
    expect(r.code).toBe(0);
  });

  it.skipIf(!HAS_PYTHON)('edits the line on a terminal: backspace, ^H, ^U, arrow keys and ^D never land in the password', async () => {
    // Keys as a terminal sends them: a wrong start killed with ^U, a typo erased with DEL and with ^H,
    // a two-byte character typed and erased whole, the cursor moved left and back right, ^D mid-line.
    const keys = `wrong\u0015${DEPOT_PASSWORD}x\u007fy\u0008é\u007f\u001b[D\u001b[C\u0004`;
    const r = await runOnTerminal(['check', localUrl(), '--ca', f.caDir, '--user', DEPOT_USER], keys);
    expect(r.screen).toContain('ACCEPT: the installer would accept this depot');
    expect(r.code).toBe(0);
  });

  it.skipIf(!HAS_PYTHON)('^D on an empty password line cancels (exit 2) instead of waiting', async () => {
    const r = await runOnTerminal(['check', localUrl(), '--ca', f.caDir, '--user', DEPOT_USER], '\u0004', '');
    expect(r.screen).toContain('Cancelled.');
    expect(r.code).toBe(2);
  });

  it('check trusts a CA folder and a folder of certificate files as it trusts a CA file', async () => {
    const certs = join(f.dir, 'certs');
    await mkdir(certs);
    await copyFile(join(f.caDir, 'ca-cert.pem'), join(certs, 'lab-root.crt'));
    // The command line once, with the folder of certificate files and a password file of mode 0600: accepted, no warning.
    const r = await runCli(['check', localUrl(), '--ca', certs, '--user', DEPOT_USER, '--password-file', f.passwordFile], { env: withoutNpm() });
    expect(r.code, r.stdout).toBe(0);
    expect(r.stderr).not.toContain('warning');
    // check reads --ca with readCaPems and checks with checkDepot: the CA folder and the CA file as the command gives them.
    for (const ca of [f.caDir, certs, join(f.caDir, 'ca-cert.pem')]) {
      const result = await checkDepot(localUrl(), { caPems: await readCaPems([ca]), user: DEPOT_USER, password: DEPOT_PASSWORD });
      expect(result.accepted, `${ca}: ${JSON.stringify(result.findings)}`).toBe(true);
    }
  });

  it('sim mgmt and mgmt replace-cert take --password-env; --server-ca takes a folder', async () => {
    const serverCerts = join(f.dir, 'mgmt-certs');
    await mkdir(serverCerts);
    const sim = await spawnCliJson<{ url: string }>(
      ['sim', 'mgmt', '--port', '0', '--password-env', 'MGMT_PW', '--cert-out', join(serverCerts, 'vc.pem'), '--json'],
      { env: { MGMT_PW: 'Mgmt-pw-1' } },
    );
    try {
      const dryRun = await runCli(
        ['mgmt', 'replace-cert', '--server', sim.info.url, '--password-env', 'MGMT_PW', '--ca', f.caDir, '--server-ca', serverCerts, '--dry-run', '--json'],
        {
          env: { ...withoutNpm(), MGMT_PW: 'Mgmt-pw-1' },
        },
      );
      expect(dryRun.code, dryRun.stderr).toBe(0);
      expect(JSON.parse(dryRun.stdout)).toMatchObject({ ok: true, dryRun: true });
      const wrong = await runCli(
        ['mgmt', 'replace-cert', '--server', sim.info.url, '--password-env', 'MGMT_PW', '--ca', f.caDir, '--server-ca', serverCerts, '--dry-run'],
        {
          env: { ...withoutNpm(), MGMT_PW: 'not it' },
        },
      );
      expect(wrong.code).not.toBe(0);
      expect(`${wrong.stdout}${wrong.stderr}`).not.toContain('not it');
    } finally {
      sim.child.kill('SIGTERM');
      await sim.exited;
    }
  });
});
