import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildDepot } from '../../src/depot/build.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { lockDepot, lockFileFor } from '../../src/depot/lock.js';
import { stateFileFor } from '../../src/depot/place.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { REPO_ROOT, tempDir } from '../helpers/temp.js';
import { buildText, outcome } from '../transfer/in-process.js';
import { sha256, vendorLikeSource } from './helpers.js';
import { deadPid } from '../helpers/process.js';
import { until } from '../helpers/poll.js';
import { ended } from '../helpers/ports.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

/** Waits, as closely as it can, until `path` exists; fails at once if `child` ended first. */
const appears = (path: string, child: ChildProcess) =>
  until(() => existsSync(path), `${path} to appear`, { timeoutMs: 60_000, everyMs: 1, failIf: ended(child) });

describe('one writer per depot: build and demo hold its lock', () => {
  it('refuses a second build while one runs, naming it; a killed build kept what it verified, and the next takes its lock over', async () => {
    // Big enough that the build is still placing binaries when the kill lands, just after its first save.
    const src = await vendorLikeSource(dir, 2 << 20);
    const out = join(dir, 'out');
    const args = ['depot', 'build', '--metadata', src.metadataDir, '--binaries', src.binariesDir, '--out', out];
    const first = spawnCli([...args, '--json'], { output: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => first.on('exit', (_code, signal) => resolve(signal)));

    // Stopped once it holds the lock: whatever it does next, it holds it while the second build runs.
    await appears(lockFileFor(out), first);
    first.kill('SIGSTOP');
    const second = await runCli(args);
    expect(second.code, second.stderr).toBe(2);
    expect(second.stderr).toContain(`${out} is being written by another run: depot build (process ${first.pid} on ${hostname()}, since `);
    expect(second.stdout).toBe('');

    // Killed once it has saved what it verified: its first file placed is saved at once.
    first.kill('SIGCONT');
    await appears(stateFileFor(out), first);
    first.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const saved = JSON.parse(await readFile(stateFileFor(out), 'utf8')) as Record<string, { sha256: string }>;
    expect(Object.keys(saved).length).toBeGreaterThan(0);
    for (const [path, entry] of Object.entries(saved)) expect(sha256(await readFile(path))).toBe(entry.sha256);

    const build = () => outcome(buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out }));
    const third = await build();
    expect(third.code, third.stderr).toBe(0);
    const report = third.report;
    expect(report.tookOverLockFrom).toMatchObject({ pid: first.pid, host: hostname(), operation: 'depot build' });
    // It was killed mid-run: some binaries were left to this run, and what the first saved is in place.
    expect(report.placed.length).toBeGreaterThan(0);
    expect(report.alreadyInPlace.length).toBeGreaterThanOrEqual(Object.keys(saved).length);
    expect(report.verify.findings.filter((f) => f.id.includes('temporary'))).toEqual([]);
    await expect(stat(lockFileFor(out))).rejects.toThrow(/ENOENT/);

    // The human report says so in a line of its own.
    const pid = await deadPid();
    await writeFile(lockFileFor(out), JSON.stringify({ pid, host: hostname(), operation: 'depot build', startedAt: '2026-01-01T00:00:00.000Z' }));
    const fourth = await build();
    expect(fourth.code, fourth.stderr).toBe(0);
    expect(buildText(fourth.report)).toContain(
      `Took over the lock of ${out} from depot build (process ${pid} on ${hostname()}, since 2026-01-01T00:00:00.000Z), which is gone: what it left was checked again.`,
    );
  });

  it('a lock is never seen empty or half written while it is taken: that would pass for a dead holder lock', async () => {
    const lockModule = join(REPO_ROOT, 'dist', 'depot', 'lock.js');
    // One process takes a lock on each depot it is given a line at a time: ten rounds, one start of node.
    const script = `const { lockDepot } = await import(${JSON.stringify(lockModule)});
for await (const root of (await import('node:readline')).createInterface({ input: process.stdin })) await lockDepot(root, 'depot build');`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'ignore', 'ignore'] });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      for (let round = 0; round < 10; round++) {
        const root = join(dir, `depot-${round}`);
        child.stdin.write(`${root}\n`);
        await appears(lockFileFor(root), child);
        // Frozen the moment the lock appears: what another run reads now is what it judges.
        child.kill('SIGSTOP');
        const text = await readFile(lockFileFor(root), 'utf8');
        child.kill('SIGCONT');
        expect(JSON.parse(text)).toMatchObject({ pid: child.pid, operation: 'depot build' });
      }
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  });

  it('depot demo refuses a depot another run writes, and takes over a dead one', async () => {
    const root = join(dir, 'demo');
    await makeDemoDepot(root, { binarySize: 16 });
    const held = await lockDepot(root, 'depot unpack');
    await expect(makeDemoDepot(root, { binarySize: 16, force: true })).rejects.toThrow(/is being written by another run: depot unpack \(process \d+ on /);
    await held.release();

    const pid = await deadPid();
    await mkdir(join(root, '.depotkit'), { recursive: true });
    await writeFile(lockFileFor(root), JSON.stringify({ pid, host: hostname(), operation: 'depot demo', startedAt: 'x' }));
    const again = await makeDemoDepot(root, { binarySize: 16, force: true });
    expect(again.tookOverLockFrom).toMatchObject({ pid, operation: 'depot demo' });
  });
});
