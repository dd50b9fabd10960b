/**
 * Running the shell blocks of the README as written: the block after a
 * heading, its variables set for this machine, `depotkit` on the PATH, and
 * what it left running found by the folder it ran in.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CLI } from './cli.js';
import { REPO_ROOT } from './temp.js';
import { pooledKeysEnv } from './key-pool.js';

/** Where this machine keeps a command: a block may run with a PATH that has neither bash nor timeout. */
function commandPath(name: string): string {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
  if (!found) throw new Error(`${name} is not installed`);
  return found;
}

/** The first sh block after `heading` in a markdown file of the repository. */
export async function shBlockAfter(file: string, heading: string): Promise<string> {
  const markdown = await readFile(join(REPO_ROOT, file), 'utf8');
  const at = markdown.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`${file} has no heading "${heading}"`);
  const match = /```sh\n([\s\S]*?)```/.exec(markdown.slice(at));
  if (!match) throw new Error(`${file} has no sh block after "${heading}"`);
  return match[1]!;
}

/** Single quotes for the shell. */
const quote = (value: string | number) => `'${String(value).replaceAll("'", `'\\''`)}'`;

/**
 * The block with the first assignment of each variable in `values` given that
 * value (an assignment starts a line or follows a blank: `a=1 b=2` sets two).
 * A variable the block does not assign fails: the README and its test drifted.
 */
export function setVariables(block: string, values: Record<string, string | number>): string {
  let script = block;
  for (const [name, value] of Object.entries(values)) {
    const assignment = new RegExp(`(^|[ \\t])${name}=\\S*`, 'm');
    if (!assignment.test(script)) throw new Error(`the block does not set ${name}`);
    script = script.replace(assignment, (_, before: string) => `${before}${name}=${quote(value)}`);
  }
  return script;
}

/** The names the block sets at its top (before its first empty line), on lines of assignments only (`name=value ... # comment`). */
export function assignedNames(block: string): string[] {
  const names: string[] = [];
  const top = block.split('\n\n')[0]!;
  for (const line of top.split('\n')) {
    const code = line.replace(/\s+#.*$/, '').trim();
    if (!/^(\w+=\S*\s*)+$/.test(code)) continue;
    for (const [, name] of code.matchAll(/(\w+)=\S*/g)) names.push(name!);
  }
  return names;
}

/** Writes `<binDir>/depotkit` running `command` (the built CLI under this Node by default) with its arguments. */
export async function writeDepotkitShim(binDir: string, command: string[] = [process.execPath, CLI]): Promise<void> {
  await writeFile(join(binDir, 'depotkit'), `#!/bin/sh\nexec ${command.map(quote).join(' ')} "$@"\n`, { mode: 0o755 });
}

/**
 * The environment a script runs `depotkit` in: the shim's folder (writeDepotkitShim) first on the PATH, and the
 * RSA keys its commands generate taken from the suite's pool (pooledKeysEnv).
 */
export function shimEnv(binDir: string): NodeJS.ProcessEnv {
  return { ...process.env, ...pooledKeysEnv(), PATH: `${binDir}:${process.env.PATH}` };
}

export interface ShellResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `script` with `bash -e -o pipefail` under `timeout` (which signals the
 * whole process group, background jobs included, when the time is up).
 */
export async function runBash(
  script: string,
  options: { cwd: string; env: NodeJS.ProcessEnv; input?: string; seconds: number; file: string },
): Promise<ShellResult> {
  await writeFile(options.file, script);
  const child = spawn(commandPath('timeout'), ['-k', '10', String(options.seconds), commandPath('bash'), '-e', '-o', 'pipefail', options.file], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdin.end(options.input ?? '');
  const code = await new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (c) => resolve(c ?? -1));
  });
  return { code, stdout, stderr };
}

/** The pids of the processes whose working folder is `dir` or under it (what a block run there left behind). */
export async function processesUnder(dir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    // A process that ended meanwhile, a zombie or another user's has no readable cwd: not ours.
    const cwd = await readlink(`/proc/${entry}/cwd`).catch(() => '');
    if (cwd === dir || cwd.startsWith(`${dir}/`)) pids.push(Number(entry));
  }
  return pids;
}

/** The `prints: ...` comments of a block: the words each step says on success, `...` where they vary. */
export function promisedLines(block: string): string[] {
  return [...block.matchAll(/^#\s+prints[^:]*:\s*(.+)$/gm)].map((m) => m[1]!.trim());
}

/** The fixed words of a promised line: its text between the `...` placeholders. */
export function fixedWords(promised: string): string[] {
  return promised
    .split('...')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
