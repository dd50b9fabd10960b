// Entry of the single executable (bundled by scripts/package.ts): the CLI, or one of serve's workers.
import { dirname, join } from 'node:path';

declare const DEPOTKIT_VERSION: string;

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
