import { spawn, type ChildProcessByStdio, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { pooledKeysEnv } from './key-pool.js';
import { REPO_ROOT } from './temp.js';

export const CLI = join(REPO_ROOT, 'dist', 'cli', 'main.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

type Stdio = 'pipe' | 'ignore';
type Stream<S extends Stdio, T> = S extends 'pipe' ? T : null;

/**
 * The built CLI (`npm test` builds first) as a child process, taking the RSA keys it generates from the suite's pool
 * (pooledKeysEnv), in `cwd` (the checkout by default): stdin ignored and its output piped unless told otherwise. For
 * a test that drives it by hand (a signal, a closed pipe, a kill mid-run); runCli and spawnCliJson start theirs here.
 */
export function spawnCli<In extends Stdio = 'ignore', Out extends Stdio = 'pipe'>(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; stdin?: In; output?: Out } = {},
): ChildProcessByStdio<Stream<In, Writable>, Stream<Out, Readable>, Stream<Out, Readable>> {
  const output = options.output ?? 'pipe';
  return spawn(process.execPath, [CLI, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, ...pooledKeysEnv(), ...options.env },
    stdio: [options.stdin ?? 'ignore', output, output],
  }) as ChildProcessByStdio<Stream<In, Writable>, Stream<Out, Readable>, Stream<Out, Readable>>;
}

/** Runs the built CLI as a user would (spawnCli), `input` on its stdin, and collects its output. */
export function runCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawnCli(args, { cwd: options.cwd, env: options.env, stdin: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

export interface CliChild<T> {
  child: ChildProcessWithoutNullStreams;
  /** The JSON the command printed once ready (its `--json` start-up line). */
  info: T;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  exited: Promise<number>;
}

/**
 * Starts a long-running command (serve, sim ...) with `--json` among `args`, and
 * resolves once its stdout holds a whole JSON value; rejects if it exits first.
 */
export function spawnCliJson<T>(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliChild<T>> {
  const child = spawnCli(args, { cwd: options.cwd, env: options.env, stdin: 'pipe' });
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      try {
        resolve({ child, info: JSON.parse(out) as T, stderr: () => err, exited });
      } catch {
        // Not the whole JSON yet.
      }
    });
    void exited.then((code) => reject(new Error(`depotkit ${args[0]} exited with ${code} before it was ready: ${err}`)));
  });
}
