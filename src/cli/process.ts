/**
 * How this process was started and how it ends: the command line the user
 * typed (for hints), a reader that stops reading stdout, and a parent npm
 * process that is gone.
 */
import { TOP_LEVEL_NAMES } from './command-names.js';
import { ServerSignals } from '../server/supervise.js';

/** The exit code of a command interrupted by Ctrl-C (or SIGTERM), as a shell reports one ended by SIGINT: 128 + 2. */
export const EXIT_INTERRUPTED = 130;

/**
 * Runs `work`; a Ctrl-C or SIGTERM meanwhile runs `cleanUp` (synchronously: writes are still under way), says
 * `sentence` and exits with EXIT_INTERRUPTED, leaving nothing a run again trips over.
 */
export async function interruptible<T>(sentence: string, cleanUp: () => void, work: () => Promise<T>): Promise<T> {
  const stop = (): void => {
    cleanUp();
    // On a line of its own, after a progress bar.
    process.stderr.write(`\n${asInvoked(sentence)}\n`);
    process.exit(EXIT_INTERRUPTED);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    return await work();
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/**
 * Was this process started by npm: `npx depotkit ...` (npm exec), or `npm start`
 * in the repository? npm sets `npm_lifecycle_event` to `npx` for npm exec and
 * to the script's name for npm run, with `npm_lifecycle_script` the command it
 * runs; both are inherited by whatever the command starts, so the script must
 * be depotkit itself (a test run under `npx vitest` is not).
 */
export function startedByNpm(env: NodeJS.ProcessEnv = process.env): boolean {
  const script = env.npm_lifecycle_script ?? '';
  if (env.npm_lifecycle_event === 'npx') return /^'?depotkit'?(\s|$)/.test(script);
  return env.npm_package_name === 'depotkit' && /(^|\s)(node\s+)?dist\/cli\/main\.js(\s|$)/.test(script);
}

/** The words that run depotkit the way this process was run: `npx depotkit` through npm, `depotkit` otherwise. */
export function invokedAs(env: NodeJS.ProcessEnv = process.env): string {
  return startedByNpm(env) ? 'npx depotkit' : 'depotkit';
}

// A hint names a top-level command right after `depotkit`.
const COMMAND_IN_TEXT = new RegExp(`(?<![\\w./-]|npx )depotkit (?=(?:${TOP_LEVEL_NAMES.flat().join('|')})\\b)`, 'g');

/** `text` with every `depotkit <command>` in it written as the user runs depotkit (`npx depotkit <command>` through npx). */
export function asInvoked(text: string, as: string = invokedAs()): string {
  return as === 'depotkit' ? text : text.replace(COMMAND_IN_TEXT, `${as} `);
}

/**
 * A reader that closes stdout early (`| head`) is not a failure: the rest of
 * the output is not wanted. Exit with the command's code so far, without the
 * stack trace Node prints for an unhandled EPIPE.
 */
export function endQuietlyOnClosedOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    });
  }
}

/** The parent this process had when it started, before anything could have ended it. */
const PARENT_AT_START = process.ppid;

/**
 * Calls `onOrphaned` once when the npm process that started this one is gone.
 * npx runs depotkit under `sh -c`; a SIGTERM to npx ends that shell and leaves
 * a server running, adopted by init, with nobody to stop it. Node has no
 * prctl(PR_SET_PDEATHSIG), so the parent's pid is polled: a new parent means
 * the old one died. Only under npm: a server started any other way (a service
 * manager, nohup, `&` in a shell) may outlive its parent on purpose.
 * The parent is the one at start-up: npm may already be gone by the time a
 * server has started and asks.
 */
export function whenNpmParentDies(onOrphaned: () => void, intervalMs = 1000): () => void {
  if (!startedByNpm()) return () => undefined;
  const parent = PARENT_AT_START;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onOrphaned();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * `depotkit serve` listens for its signals from this module's evaluation, the
 * first thing the CLI runs (it imports only the list of command names and the library's signal holder, and main.ts loads the commands
 * only after it), not only once its command has been parsed.
 */
const SIGNALS_FROM_START = process.argv[2] === 'serve' ? new ServerSignals() : undefined;

/** The server's signals: listened for since the process started (for `serve`), or from now. */
export function serverSignals(): ServerSignals {
  return SIGNALS_FROM_START ?? new ServerSignals();
}
