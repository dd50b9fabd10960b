import { execFile, execFileSync, spawn } from 'node:child_process';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { REPO_ROOT, tempDir } from '../helpers/temp.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { until } from '../helpers/poll.js';

const HAS_NPX = (() => {
  try {
    execFileSync('npx', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** Whether a process of this pid is alive (signal 0 only asks). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Resolves once `pid` has exited; after `ms`, kills it and fails with `why()` (what it said), so a hang says where. */
async function exitOf(pid: number, ms: number, why: () => string): Promise<void> {
  await until(() => !alive(pid), `pid ${pid} to exit`, { timeoutMs: ms, everyMs: 100 }).catch(() => {
    process.kill(pid, 'SIGKILL');
    throw new Error(`pid ${pid} still running ${ms / 1000} s after npx was stopped; it said: ${why()}`);
  });
}

describe('a server started by npm', () => {
  it('notices that npm is gone even when it went before the server asked', async () => {
    // As npx runs depotkit: under sh -c, with npm's variables. The shell is killed before the watch
    // starts, which is what a SIGTERM to npx right after start-up does on a loaded machine.
    const script = [
      `const { whenNpmParentDies } = await import(${JSON.stringify(pathToFileURL(join(REPO_ROOT, 'dist', 'cli', 'process.js')).href)});`,
      'process.kill(process.ppid, "SIGKILL");',
      'await new Promise((r) => setTimeout(r, 300));',
      'whenNpmParentDies(() => { console.log("orphaned"); process.exit(0); }, 50);',
      'setTimeout(() => { console.log("still waiting"); process.exit(1); }, 3000);',
    ].join('\n');
    const child = spawn('sh', ['-c', `"${process.execPath}" --input-type=module -e '${script.replaceAll("'", "'\\''")}'; true`], {
      env: { ...process.env, npm_lifecycle_event: 'npx', npm_lifecycle_script: 'depotkit serve' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    await new Promise((r) => child.stdout.on('end', r));
    expect(out.trim()).toBe('orphaned');
  });
});

/**
 * npx runs the checkout as a package it links (`file:`), and the first time in a checkout npm runs its `prepare`
 * script there: the whole build again, which `npm test` has just done (here the first `npx depotkit --version` in
 * a checkout took 17.3 CPU s, the next 1.4). Without scripts npx runs it as it is, the same way.
 */
const NPX_ENV = { ...process.env, npm_config_ignore_scripts: 'true' };

// npm's own start-up is most of each test: the two run side by side.
describe.skipIf(!HAS_NPX).concurrent('run through npx (the real npm)', () => {
  let cleanup: () => Promise<void>;
  let dir: string;
  let depot: string;
  beforeAll(async () => {
    // npm makes a bin executable when it first links it; a build made since then (tsc writes 0644
    // files) in a checkout npx has linked before is run as it is, so do what npm does.
    await chmod(CLI, 0o755);
    ({ dir, cleanup } = await tempDir('depotkit-cli-npx-'));
    depot = join(dir, 'depot');
    await makeDemoDepot(depot, { binarySize: 16 });
  });
  afterAll(async () => cleanup?.());

  it('npx depotkit serve stops when the npx process is stopped with SIGTERM', async ({ expect }) => {
    // npx runs depotkit under sh -c: a SIGTERM to npx ends that shell, not depotkit.
    const npx = spawn('npx', ['depotkit', 'serve', depot, '--http', '--host', '127.0.0.1', '--port', '0', '--workers', '1', '--json'], {
      cwd: REPO_ROOT,
      env: NPX_ENV,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    npx.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const info = await new Promise<{ pid: number; url: string }>((resolve, reject) => {
      npx.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        try {
          resolve(JSON.parse(out) as { pid: number; url: string });
        } catch {
          // Not the whole JSON yet.
        }
      });
      npx.on('close', () => reject(new Error(`npx exited before serving: ${err}`)));
      // npm's own start-up and its look-up of the bin take seconds at a heavy load: a generous bound.
      setTimeout(() => reject(new Error(`npx printed no address in 60 s; it said: ${err}`)), 60_000).unref();
    });
    expect(info.pid).not.toBe(npx.pid);
    expect(alive(info.pid)).toBe(true);
    npx.kill('SIGTERM');
    await exitOf(info.pid, 20_000, () => err);
    expect(alive(info.pid)).toBe(false);
    expect(err).toContain('The npm process that started this server is gone.');
    expect(err).toContain('Stopped.');
  }, 120_000);

  it('npx depotkit prints its hints as npx depotkit', async ({ expect }) => {
    const { stdout } = await promisify(execFile)('npx', ['depotkit', 'cert', 'ca', '--out', join(dir, 'npx-ca'), '--key-size', '2048'], {
      cwd: REPO_ROOT,
      env: NPX_ENV,
      encoding: 'utf8',
    });
    expect(stdout).toContain(`then: npx depotkit cert issue --ca ${join(dir, 'npx-ca')}`);
  });
});
