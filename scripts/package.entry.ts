// Entry of the single executable (bundled by scripts/package.ts): the CLI, or one of serve's workers.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

declare const DEPOTKIT_VERSION: string;
/** Modules that the code wants as files (a worker thread's require), by name: their bundled text. */
declare const __DEPOTKIT_FILES__: Readonly<Record<string, string>>;

let filesDir: string | undefined;

/**
 * What `createRequire(import.meta.url).resolve(name)` gives outside the executable: a file holding
 * the module. Written on first use into a folder only this process's user can read, removed on exit.
 */
function resolveEmbedded(name: string): string {
  const text = __DEPOTKIT_FILES__[name];
  if (text === undefined) throw new Error(`Cannot find module '${name}' in this executable.`);
  if (filesDir === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'depotkit-'));
    filesDir = dir;
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  const file = join(filesDir, `${name.replace(/[^A-Za-z0-9._-]/g, '_')}.cjs`);
  if (!existsSync(file)) writeFileSync(file, text, { mode: 0o600 });
  return file;
}
(globalThis as { __depotkitResolve?: (name: string) => string }).__depotkitResolve = resolveEmbedded;

/**
 * `serve --workers N` forks process.execPath with the worker module's path beside the code
 * (src/server/workers.ts), and here the code is this executable: the forked copy is handed
 * `<folder of the executable>/worker.js` with an IPC channel, names no file, and runs the
 * worker, which the bundle carries.
 */
const WORKER_ARGUMENT = join(dirname(process.execPath), 'worker.js');

async function start(): Promise<void> {
  const args = process.argv.slice(2);
  if (process.send !== undefined && args.length === 1 && args[0] === WORKER_ARGUMENT) {
    await import('../src/server/worker.js');
    return;
  }
  // The embedded runtime is part of what this file is: its version says which.
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
    process.stdout.write(`depotkit ${DEPOTKIT_VERSION} (node ${process.version})\n`);
    return;
  }
  const { main } = await import('../src/cli/program.js');
  process.exitCode = await main(process.argv);
}

void start();
