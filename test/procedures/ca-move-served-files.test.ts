import { execFileSync, spawn } from 'node:child_process';
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { moveDepotCa, type CaMoveOptions, type ServedDepot } from '../../src/procedures/index.js';
import { isServeCommandLine } from '../../src/procedures/ca-move/serve-process.js';
import { loadTlsMaterial } from '../../src/server/tls.js';
import { isTempName } from '../../src/util/fs.js';
import { runCli } from '../helpers/cli.js';
import { DEPOT_PASSWORD, DEPOT_USER } from '../installer/helpers.js';
import { DEPOT_PASSWORD_ENV, PASSWORD_ENV, depotSpec, holds, useMoveFixture, type MoveFixture } from './ca-move-fixture.js';

function options(fx: MoveFixture, served: ServedDepot, extra: Partial<CaMoveOptions> = {}): CaMoveOptions {
  return {
    newCert: fx.files.newCert,
    newKey: fx.files.newKey,
    newCa: fx.files.newCa,
    served,
    depot: depotSpec(fx.depotUrl),
    consumers: fx.targets,
    concurrency: 2,
    timeoutMs: 30_000,
    switchTimeoutMs: 3_000,
    ...extra,
  };
}

describe("the CA move's served files and serve's pid", () => {
  let fx: MoveFixture;
  // One fixture for the file: the refusals change nothing, and the last test writes files of its own.
  useMoveFixture('depotkit-ca-move-files-', 1, (made) => (fx = made));

  it('refuses a pid that is not serve (a stale pid file) before anything is done: the process is not signalled', async () => {
    const files = { certFile: fx.files.served.cert, keyFile: fx.files.served.key };
    const served = await readFile(fx.files.served.cert, 'utf8');
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)']);
    try {
      for (const dryRun of [true, false]) {
        await expect(moveDepotCa(options(fx, { kind: 'serve', pid: other.pid!, ...files }, { dryRun }))).rejects.toMatchObject({
          exitCode: 2,
          message: `Process ${other.pid} is not depotkit serve (it runs another command): it was not signalled, and the served files are unchanged.`,
        });
      }
      expect([other.exitCode, other.signalCode]).toEqual([null, null]);
    } finally {
      other.kill();
    }
    await new Promise((r) => other.once('exit', r));
    await expect(moveDepotCa(options(fx, { kind: 'serve', pid: other.pid!, ...files }))).rejects.toThrow(
      `No process has the pid ${other.pid} given for serve: is its pid file left from a serve that stopped?`,
    );
    expect(await holds(fx.sims[0]!, fx.newCa.certPem)).toBe(false);
    expect(await readFile(fx.files.served.cert, 'utf8')).toBe(served);
    // serve's own pid passes.
    const dry = await moveDepotCa(options(fx, { kind: 'serve', pid: fx.serve.info.pid, ...files }, { dryRun: true }));
    expect(dry.ok).toBe(true);
  }, 60_000);

  it('--serve-pid: a pid file that is a FIFO is refused unread, one of a serve that stopped with a sentence that says so (exit 2)', async () => {
    const inventory = join(fx.dir, 'consumers.yaml');
    await writeFile(inventory, `installers:\n  - { url: "${fx.targets[0]!.url}", passwordEnv: ${PASSWORD_ENV}, insecure: true }\n`);
    const move = (servePid: string) =>
      runCli(
        [
          ...['depot', 'move-ca', '--cert', fx.files.newCert, '--key', fx.files.newKey, '--new-ca', fx.files.newCa],
          ...['--served-cert', fx.files.served.cert, '--served-key', fx.files.served.key, '--serve-pid', servePid, '--inventory', inventory],
          ...['--depot-url', fx.depotUrl, '--depot-user', DEPOT_USER, '--depot-password-env', DEPOT_PASSWORD_ENV, '--dry-run'],
        ],
        { env: { [DEPOT_PASSWORD_ENV]: DEPOT_PASSWORD } },
      );
    const fifo = join(fx.dir, 'serve.pid');
    execFileSync('mkfifo', [fifo]);
    const blocked = await move(fifo);
    expect([blocked.code, blocked.stderr.trim()]).toEqual([2, `depotkit: ${fifo} is a FIFO, not a regular file: it is not a pid file.`]);
    const gone = spawn(process.execPath, ['-e', '']);
    await new Promise((r) => gone.once('exit', r));
    const stale = join(fx.dir, 'stale.pid');
    await writeFile(stale, `${gone.pid}\n`);
    const refused = await move(stale);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`No process has the pid ${gone.pid} given for serve: is its pid file left from a serve that stopped?`);
    expect(refused.stderr).not.toContain('--force');
  }, 60_000);

  it('writes a combined PEM (certificate and key in one file) back as one, which serve loads, leaving no temporary copy of the key', async () => {
    const combined = join(fx.dir, 'served.pem');
    await writeFile(combined, `${await readFile(fx.files.served.cert, 'utf8')}${await readFile(fx.files.served.key, 'utf8')}`, { mode: 0o600 });
    const report = await moveDepotCa(options(fx, { kind: 'site', certFile: combined, keyFile: combined }));
    // No reload command: the pair is written and the move stops for the reload.
    expect(report.phases.map((p) => [p.phase, p.ok, p.note])).toContainEqual(['switch', false, 'reload-needed']);
    const [newCert, newKey] = await Promise.all([readFile(fx.files.newCert, 'utf8'), readFile(fx.files.newKey, 'utf8')]);
    expect(await readFile(combined, 'utf8')).toBe(`${newCert}${newKey}`);
    expect((await stat(combined)).mode & 0o777).toBe(0o600);
    await expect(loadTlsMaterial({ certFile: combined, keyFile: combined })).resolves.toMatchObject({ certPem: `${newCert}${newKey}` });
    expect((await readdir(fx.dir)).filter((name) => isTempName(name) || name.endsWith('.bak'))).toEqual([]);
    // A file that had the key first gets it first again.
    const keyFirst = join(fx.dir, 'key-first.pem');
    await writeFile(keyFirst, `${await readFile(fx.files.served.key, 'utf8')}${await readFile(fx.files.served.cert, 'utf8')}`, { mode: 0o600 });
    await moveDepotCa(options(fx, { kind: 'site', certFile: keyFirst, keyFile: keyFirst }, { stateFile: join(fx.dir, 'key-first-move.json') }));
    expect(await readFile(keyFirst, 'utf8')).toBe(`${newKey}${newCert}`);
  }, 90_000);
});

describe("serve's command line", () => {
  it('is depotkit (its command, the single executable, or node on the CLI script) running serve', () => {
    expect(isServeCommandLine(['node', '/usr/lib/node_modules/depotkit/dist/cli/main.js', 'serve', '/srv/depot'])).toBe(true);
    expect(isServeCommandLine(['/usr/bin/node', '/usr/bin/depotkit', 'serve', '--port', '8443'])).toBe(true);
    expect(isServeCommandLine(['./release/depotkit-0.1.0-linux-x64', 'serve'])).toBe(true);
    expect(isServeCommandLine(['node', 'dist/cli/main.js', 'check', 'serve'])).toBe(false);
    expect(isServeCommandLine(['node', '/usr/lib/node_modules/depotkit/dist/cli/worker.js'])).toBe(false);
    expect(isServeCommandLine(['sleep', '100'])).toBe(false);
    expect(isServeCommandLine([])).toBe(false);
  });
});
