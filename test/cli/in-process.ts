import { vi } from 'vitest';
import { programFor } from '../../src/cli/commands.js';
import { mainWith } from '../../src/cli/program-core.js';
import { CLI, type CliResult } from '../helpers/cli.js';

/**
 * Runs the command line's main (parsing, the command's checks, the printed error and its exit code) in this
 * process, as dist/cli/main.js runs it, with `env` over the test's environment: for refusals of bad usage,
 * which end before any work. The built CLI is still run once per command and exit path by the tests.
 */
export async function runMain(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  let stdout = '';
  let stderr = '';
  const { write: outWrite } = process.stdout;
  const { write: errWrite } = process.stderr;
  const exitCode = process.exitCode;
  process.exitCode = undefined;
  process.stdout.write = ((chunk: string) => ((stdout += chunk), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string) => ((stderr += chunk), true)) as typeof process.stderr.write;
  const listeners = () => LISTENED.map((event) => process.listenerCount(event)).join();
  const before = listeners();
  let code: number;
  try {
    code = await mainWith([process.execPath, CLI, ...args], programFor);
  } finally {
    process.stdout.write = outWrite;
    process.stderr.write = errWrite;
    process.exitCode = exitCode;
    vi.unstubAllEnvs();
  }
  // A command that got as far as listening for signals (serve, sim ...) would stop the test runner's process on its
  // SIGTERM: such commands are for runCli.
  if (listeners() !== before) throw new Error(`depotkit ${args.join(' ')} left signal or exit listeners behind: run it with runCli`);
  return { code, stdout, stderr };
}

const LISTENED = ['SIGINT', 'SIGTERM', 'SIGHUP', 'exit'] as const;
