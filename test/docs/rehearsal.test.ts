/**
 * The README's rehearsal runs as written: its shell block, unchanged but for
 * its folder and ports (free ones, so that tests can run side by side), with
 * `depotkit` the built CLI (its new RSA keys, of the sizes the block asks for,
 * from the suite's pool). Pasted twice into one shell, as a reader pasting
 * it again would; each paste leaves nothing running.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../helpers/temp.js';
import { assignedNames, processesUnder, runBash, setVariables, shBlockAfter, shimEnv, writeDepotkitShim } from '../helpers/readme.js';
import { freePorts, portAccepts } from '../helpers/ports.js';

const run = promisify(execFile);
const HEADING = '## Rehearsal: the whole flow on one machine';
/** What the test prints between the two pastes of the block. */
const PASTED_AGAIN = '--- the block pasted again';

let tmp: { dir: string; cleanup: () => Promise<void> };
let bin: string;
let repo: string;
beforeAll(async () => {
  tmp = await tempDir('depotkit-rehearsal-');
  bin = join(tmp.dir, 'bin');
  await mkdir(bin);
  await writeDepotkitShim(bin);
  // A scratch repository with the checkout's .gitignore: the rehearsal run where a reader may run it, in the checkout.
  repo = join(tmp.dir, 'checkout');
  await mkdir(repo);
  await run('git', ['init', '-q', repo]);
  await copyFile(join(REPO_ROOT, '.gitignore'), join(repo, '.gitignore'));
});
afterAll(async () => {
  // Whatever a failed run left, so that no server outlives the test.
  for (const pid of await processesUnder(tmp.dir)) process.kill(pid, 'SIGKILL');
  await tmp?.cleanup();
});

async function rehearsal(work: string, ports: { depot: number; installer: number; vc: number }): Promise<string> {
  const block = await shBlockAfter('README.md', HEADING);
  expect(assignedNames(block).sort()).toEqual(['depot_port', 'installer_port', 'vc_port', 'work']);
  return setVariables(block, { work, depot_port: ports.depot, installer_port: ports.installer, vc_port: ports.vc });
}

const env = () => shimEnv(bin);

it("the README's rehearsal runs as written, pasted twice into one shell: depot served and checked, installer trusting it by its FQDN, management certificate replaced; nothing left running, nothing unignored", async () => {
  const work = join(repo, 'rehearsal');
  const [depot, installer, vc] = await freePorts(3);
  const ports = { depot: depot!, installer: installer!, vc: vc! };
  const block = await rehearsal(work, ports);
  // Pasted twice into the same shell, as a reader would: the second paste starts where the first one left the shell.
  const script = `${block}\necho '${PASTED_AGAIN}'\n${block}\n`;
  const { code, stdout, stderr } = await runBash(script, { cwd: tmp.dir, env: env(), seconds: 300, file: join(tmp.dir, 'rehearsal.sh') });
  expect(code, `the rehearsal stopped (exit ${code}):\n${stdout}\n${stderr}`).toBe(0);
  const runs = stdout.split(`${PASTED_AGAIN}\n`);
  expect(runs).toHaveLength(2);
  for (const [index, output] of runs.entries()) {
    const round = index + 1;
    expect(output, `run ${round}`).toMatch(/ACCEPT/);
    expect(output).toMatch(/imported: CN=depotkit private CA/);
    expect(output).toContain(`depot depot.lab.local:${ports.depot}: DEPOT_CONNECTION_SUCCESSFUL`);
    expect(output).toMatch(/Replaced the certificate of https:\/\/127\.0\.0\.1:\d+ [\s\S]*issued by CN=depotkit private CA[\s\S]*verified: trusted by the CA/);
    // The CA is made once and then reused.
    expect(output.includes('Made CA'), `run ${round}`).toBe(round === 1);
  }
  expect(stdout + stderr).not.toContain('Dep0t-Secret');
  expect(stdout + stderr).not.toContain('VMware1!VMware1!');
  expect(stderr).not.toMatch(/is taken|gave up waiting/);
  // The second paste worked in the same folder, not in one nested in it.
  expect(existsSync(join(work, 'rehearsal'))).toBe(false);
  expect(await processesUnder(work)).toEqual([]);
  for (const port of Object.values(ports)) expect(await portAccepts(port), `port ${port}`).toBe(false);
  // Run in a checkout, its keys and passwords are ignored: git sees nothing new but the .gitignore itself.
  const { stdout: status } = await run('git', ['-C', repo, 'status', '--porcelain', '--untracked-files=all', '--ignored=no']);
  expect(status.trim()).toBe('?? .gitignore');
}, 420_000);

it('says at once that a port is taken, and starts nothing', async () => {
  const taken: Server = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const depot = (taken.address() as { port: number }).port;
  const work = join(tmp.dir, 'busy');
  try {
    const [installer, vc] = await freePorts(2);
    const script = await rehearsal(work, { depot, installer: installer!, vc: vc! });
    const { code, stdout, stderr } = await runBash(script, { cwd: tmp.dir, env: env(), seconds: 60, file: join(tmp.dir, 'busy.sh') });
    expect(code).toBe(1);
    expect(stderr).toContain(`port ${depot} is taken`);
    expect(stdout).toBe('');
    expect(await processesUnder(work)).toEqual([]);
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
}, 60_000);
