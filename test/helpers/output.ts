import { printError } from '../../src/cli/output.js';
import type { CliResult } from './cli.js';

/**
 * What `print` writes to stdout and stderr, caught in this process: the CLI's
 * own printing (printLines, printJson, printError ...) checked without
 * starting the CLI. `print` must write synchronously.
 */
export function printed<T>(print: () => T): { value: T; stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  const { write: outWrite } = process.stdout;
  const { write: errWrite } = process.stderr;
  process.stdout.write = ((chunk: string) => ((stdout += chunk), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string) => ((stderr += chunk), true)) as typeof process.stderr.write;
  try {
    const value = print();
    return { value, stdout, stderr };
  } finally {
    process.stdout.write = outWrite;
    process.stderr.write = errWrite;
  }
}

/**
 * How a failure the library raised reads on the command line: the exit code
 * and the lines printError writes (one sentence, its fix). `expectOneSentence`
 * and the like take the result as they take runCli's.
 */
export function shownError(err: unknown): CliResult {
  const { value: code, stdout, stderr } = printed(() => printError(err));
  return { code, stdout, stderr };
}

/** How the failure of `work` reads on the command line (see shownError); fails the test if `work` succeeds. */
export async function refusal(work: Promise<unknown> | (() => unknown)): Promise<CliResult> {
  try {
    await (typeof work === 'function' ? work() : work);
  } catch (err) {
    return shownError(err);
  }
  throw new Error('expected a refusal, but the call succeeded');
}
