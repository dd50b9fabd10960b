import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { pooledKeysEnv } from './key-pool.js';
import { REPO_ROOT } from './temp.js';

export const CLI = join(REPO_ROOT, 'dist', 'cli', 'main.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI (`npm test` builds first) as a user would, and collects its output. Every child takes the RSA keys
 * it generates from the suite's pool (pooledKeysEnv).
 */
export function runCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd ?? REPO_ROOT,
      env: { ...process.env, ...pooledKeysEnv(), ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
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
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, ...pooledKeysEnv(), ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
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
