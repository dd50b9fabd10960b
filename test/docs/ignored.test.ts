/**
 * What `npm start` writes in the checkout (the demo depot, its signing key,
 * the demo CA, the server key, the password) is ignored by git: run in a
 * scratch repository holding the checkout's .gitignore, git sees nothing new.
 * Its RSA keys, of the sizes `npm start` asks for, come from the suite's pool.
 */
import { execFile } from 'node:child_process';
import { copyFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli, spawnCli } from '../helpers/cli.js';
import { REPO_ROOT, tempDir } from '../helpers/temp.js';

const run = promisify(execFile);

let tmp: { dir: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  tmp = await tempDir('depotkit-ignored-');
  await run('git', ['init', '-q', tmp.dir]);
  await copyFile(join(REPO_ROOT, '.gitignore'), join(tmp.dir, '.gitignore'));
});
afterAll(() => tmp?.cleanup());

/** `depotkit start` serving on a free port until it says so, then stopped as Ctrl-C would. */
async function startAndStop(cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawnCli(['start', '--port', '0'], { cwd });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    if (stdout.includes('Ctrl-C stops it.')) child.kill('SIGINT');
  });
  return { code: await code, stdout, stderr };
}

it('npm start leaves no key, password or demo file that git would add', async () => {
  const made = await runCli(['start', '--no-serve'], { cwd: tmp.dir });
  expect(made.code, made.stderr).toBe(0);
  const served = await startAndStop(tmp.dir);
  expect(served.stderr).toContain('Made in ./demo-pki');
  expect(served.code, served.stderr).toBe(0);
  // The run wrote keys and a password: the signing key, the CA's, the server's.
  const names = (await readdir(tmp.dir, { recursive: true })).map(String);
  for (const secret of ['demo-depot-signing/signing-key.pem', 'demo-pki/ca/ca-key.pem', 'demo-pki/server/server-key.pem']) expect(names).toContain(secret);
  const { stdout: status } = await run('git', ['-C', tmp.dir, 'status', '--porcelain', '--untracked-files=all', '--ignored=no']);
  expect(status.trim()).toBe('?? .gitignore');
}, 120_000);
