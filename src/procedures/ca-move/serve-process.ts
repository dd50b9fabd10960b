import { basename } from 'node:path';
import { DepotkitError, EXIT } from '../../util/errors.js';
import { processArguments } from '../../util/process-identity.js';
import type { ServedDepot } from './types.js';

/** The script node runs when depotkit runs from its package (the package's bin). */
const CLI_SCRIPT = 'dist/cli/main.js';

/**
 * Whether `args` are depotkit serve's: depotkit's program (the `depotkit` command, the single executable,
 * or node running the package's CLI script), then `serve` as the first word after it that is no option.
 * serve's workers run another script, and are not what a reload is sent to.
 */
export function isServeCommandLine(args: readonly string[]): boolean {
  const program = args.findIndex((arg) => basename(arg).startsWith('depotkit') || arg === CLI_SCRIPT || arg.endsWith(`/${CLI_SCRIPT}`));
  return program >= 0 && args.slice(program + 1).find((arg) => !arg.startsWith('-')) === 'serve';
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Refuses a pid that is not depotkit serve's before anything is written or signalled: a pid file left by a
 * serve that stopped names whatever process has that pid now, and SIGHUP ends most processes. Its command
 * line is what tells (procfs); where it cannot be read, the pid is refused too.
 */
export async function checkServeProcess(served: ServedDepot): Promise<void> {
  if (served.kind !== 'serve') return;
  const { pid } = served;
  const args = await processArguments(pid);
  if (args && isServeCommandLine(args)) return;
  const fix = 'Give the pid serve printed when it started ("(pid N)"), or start serve and give its pid.';
  if (!isRunning(pid))
    throw new DepotkitError(`No process has the pid ${pid} given for serve: is its pid file left from a serve that stopped?`, EXIT.usage, fix);
  const why = args ? 'runs another command' : 'has a command line that cannot be read';
  throw new DepotkitError(`Process ${pid} is not depotkit serve (it ${why}): it was not signalled, and the served files are unchanged.`, EXIT.usage, fix);
}
