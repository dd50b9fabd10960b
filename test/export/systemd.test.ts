import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, runCli } from '../helpers/cli.js';
import { checkDepot } from '../../src/check/check.js';
import { HOST, LOGROTATE, PASSWORD, SYSTEMD_ANALYZE, USER, exportArgs, fetchRaw, makeFixture, run, type Fixture } from './helpers.js';
import { ended, freePort, untilAccepting } from '../helpers/ports.js';

let fixture: Fixture;
let unit: string;
let unitText: string;
let out: string;
let port: number;
const GRACE = 12;

beforeAll(async () => {
  fixture = await makeFixture();
  out = join(fixture.dir, 'systemd');
  port = await freePort();
  // The service user must exist for logrotate to read its `su` line: Debian's daemon user stands in.
  const r = await runCli([...exportArgs(fixture, 'systemd', out, port), '--open-hcl', '--grace', String(GRACE), '--workers', '2', '--service-user', 'daemon']);
  expect(r.code, r.stderr).toBe(0);
  unit = join(out, 'depotkit.service');
  unitText = await readFile(unit, 'utf8');
});
afterAll(() => fixture?.cleanup());

/** A unit file's `Key=value` lines of one key. */
const values = (key: string) => [...unitText.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]);

/** ExecStart's words, unquoted as systemd splits them. */
function execStart(): string[] {
  return [...values('ExecStart')[0]!.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}

describe('depotkit export systemd', () => {
  it('runs depotkit serve as a dedicated user with a reload, a stop longer than the grace period and a locked-down service', () => {
    expect(values('User')).toEqual(['daemon']);
    expect(values('Group')).toEqual(['daemon']);
    expect(values('ExecReload')).toEqual(['/bin/kill -HUP $MAINPID']);
    expect(Number(values('TimeoutStopSec')[0])).toBeGreaterThan(GRACE);
    expect(values('AmbientCapabilities')).toEqual(['CAP_NET_BIND_SERVICE']);
    expect(values('NoNewPrivileges')).toEqual(['yes']);
    expect(values('ProtectSystem')).toEqual(['strict']);
    expect(values('ReadOnlyPaths')).toEqual([fixture.root]);
    expect(values('PrivateTmp')).toEqual(['yes']);
    expect(values('LogsDirectory')).toEqual(['depotkit']);
    expect(values('MemoryDenyWriteExecute')).toEqual([]);
    const words = execStart();
    expect(words.slice(0, 2)).toEqual([process.execPath, CLI]);
    expect(words.slice(2)).toEqual([
      'serve',
      fixture.root,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--cert',
      fixture.certFile,
      '--key',
      fixture.keyFile,
      '--htpasswd',
      join(out, 'depotkit.htpasswd'),
      '--open',
      'PROD/vsan/hcl',
      '--workers',
      '2',
      '--grace',
      String(GRACE),
      '--access-log',
      '/var/log/depotkit/access.log',
    ]);
  });

  it.skipIf(!SYSTEMD_ANALYZE)('passes systemd-analyze verify without a word', async () => {
    const { stdout, stderr } = await run(SYSTEMD_ANALYZE!, ['verify', '--man=no', unit]);
    expect(`${stdout}${stderr}`).toBe('');
  });

  it.skipIf(!SYSTEMD_ANALYZE)('systemd-analyze verify does speak up about a broken unit (so its silence means something)', async () => {
    const broken = join(out, 'broken.service');
    await writeFile(broken, unitText.replace(/^TimeoutStopSec=.*$/m, 'TimeoutStopSec=soon'));
    const { stderr } = await run(SYSTEMD_ANALYZE!, ['verify', '--man=no', broken]);
    expect(stderr).toMatch(/broken\.service:\d+: Failed to parse time value/);
  });

  it.skipIf(!LOGROTATE)('writes a logrotate file that logrotate reads, reloading the service after rotating', async () => {
    const text = await readFile(join(out, 'depotkit.logrotate'), 'utf8');
    expect(text).toMatch(/^\/var\/log\/depotkit\/access\.log \{$/m);
    expect(text).toContain('systemctl reload depotkit.service');
    const r = await run(LOGROTATE!, ['-d', '-s', join(out, 'logrotate.state'), join(out, 'depotkit.logrotate')]).catch(
      (err: { stdout: string; stderr: string }) => err,
    );
    const said = `${r.stdout}${r.stderr}`;
    expect(said).not.toMatch(/error:/);
    expect(said).toContain('rotating pattern: /var/log/depotkit/access.log');
  });

  it('writes a sysusers.d line that creates the service user', async () => {
    expect(await readFile(join(out, 'depotkit.sysusers.conf'), 'utf8')).toMatch(/^u daemon - "depotkit depot server" - -$/m);
  });

  it("ExecStart's command serves the depot: depotkit check accepts it, SIGHUP reloads, SIGTERM stops", async () => {
    // The unit's own command line, but for the access log (no /var/log/depotkit outside the service).
    const words = execStart();
    const log = join(out, 'access.log');
    words[words.length - 1] = log;
    const child = spawn(words[0]!, words.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      await untilAccepting(port, 'the server the unit started', { everyMs: 50, failIf: ended(child, () => stderr) });
      const ca = await readFile(fixture.caFile, 'utf8');
      const check = await checkDepot(`https://127.0.0.1:${port}`, { asHost: HOST, caPems: [ca], user: USER, password: PASSWORD });
      expect(check.accepted, `${JSON.stringify(check.findings)}${stderr}`).toBe(true);
      // A reload under way must not stop serving. One CI run under heavy load saw the very first
      // connection after the signal reset (not reproduced since): a second attempt is allowed, a
      // second reset fails the test.
      child.kill('SIGHUP');
      const hcl = () => fetchRaw(port, '/PROD/vsan/hcl/all.json', { ca });
      const answer = await hcl().catch((err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? hcl() : Promise.reject(err)));
      expect(answer.status).toBe(200);
      expect(await readFile(log, 'utf8')).toMatch(/"HEAD \/PROD\/metadata\/productVersionCatalog\/v1\/productVersionCatalog\.json HTTP\/1\.1" 200/);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
