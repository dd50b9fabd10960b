import { createServer, type AddressInfo, type Socket } from 'node:net';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnCliJson, spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { until } from '../helpers/poll.js';

/** Starts the built CLI and collects what it says; `interrupt()` sends it SIGINT. */
function start(
  args: string[],
  cwd?: string,
): { interrupt(): void; stderr(): string; done: Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> } {
  const child = spawnCli(args, { cwd });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return {
    interrupt: () => child.kill('SIGINT'),
    stderr: () => stderr,
    done: new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))),
  };
}

describe('an interrupted command says so and exits 130', () => {
  let dir = '';
  let cleanup: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('depotkit-interrupts-'));
  });
  afterAll(() => cleanup());

  it('installer depot, interrupted while the installer validates the depot, reports no internal error', async () => {
    // A depot that accepts connections and never answers keeps the installer validating it.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const passwordFile = join(dir, 'installer-password');
    await writeFile(passwordFile, 'Installer-pw-1\n', { mode: 0o600 });
    const certOut = join(dir, 'sim.pem');
    const sim = await spawnCliJson<{ url: string }>(['sim', 'installer', '--password-file', passwordFile, '--cert-out', certOut, '--json']);
    try {
      const run = start([
        'installer',
        'depot',
        '--installer',
        sim.info.url,
        '--password-file',
        passwordFile,
        '--installer-ca',
        certOut,
        '--depot-host',
        '127.0.0.1',
        '--depot-port',
        String((silent.address() as AddressInfo).port),
        // Without a sync the command asks the depot nothing itself (no catalog date), so the first connection the
        // silent depot takes is the installer's validation.
        '--no-sync',
      ]);
      // The SIGINT goes once the installer is connected to the depot, in the middle of the update.
      await until(() => sockets.length > 0, 'the installer connected to the depot', { timeoutMs: 60_000 });
      run.interrupt();
      const { code, stdout, stderr } = await run.done;
      expect(code).toBe(130);
      expect(stderr).toMatch(/interrupted/);
      expect(stdout + stderr).not.toMatch(/destroyed|FAILED/);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
      sim.child.kill('SIGTERM');
      await sim.exited;
    }
  });

  it('depot demo, interrupted while it writes, leaves no temporary file, and a run again finishes it without --force', async () => {
    const depot = join(dir, 'demo');
    const writing = async () => (await readdir(depot, { recursive: true }).catch(() => [] as string[])).some((f) => f.includes('.depotkit-tmp-'));
    const run = start(['depot', 'demo', depot, '--binary-size', '256M']);
    // Interrupted once it writes its first binary: several remain to be written.
    await until(writing, 'demo writing its first binary', { timeoutMs: 60_000 });
    run.interrupt();
    const { code, stderr } = await run.done;
    expect(code).toBe(130);
    expect(stderr).toMatch(/interrupted: .* is half made; run the same command again/);
    expect((await readdir(depot, { recursive: true })).filter((f) => f.includes('.depotkit-tmp-'))).toEqual([]);

    // What reads a depot names the cause and the fix, not a missing catalog.
    for (const args of [
      ['depot', 'verify', depot],
      ['depot', 'prune', depot],
    ]) {
      const said = await runCli(args);
      expect(said.code).toBe(1);
      expect(said.stderr).toContain('is a demo depot that an interrupted run left half made');
      expect(said.stderr).toContain(`Run it again to finish it: depotkit depot demo ${depot}`);
    }

    const again = await runCli(['depot', 'demo', depot, '--binary-size', '1K']);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect((await runCli(['depot', 'verify', depot])).code).toBe(0);
  });
});
