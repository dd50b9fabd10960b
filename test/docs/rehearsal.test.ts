/**
 * The README's rehearsal runs as written: its shell block, unchanged but for
 * its folder and ports (free ones, so that tests can run side by side), with
 * `depotkit` the built CLI. Run twice in a row, as a reader pasting it again
 * would; each run leaves nothing running.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { assignedNames, freePort, portAccepts, processesUnder, runBash, setVariables, shBlockAfter, writeDepotkitShim } from '../helpers/readme.js';

const run = promisify(execFile);
const HEADING = '## Rehearsal: the whole flow on one machine';

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

const env = () => ({ ...process.env, PATH: `${bin}:${process.env.PATH}` });

it("the README's rehearsal runs as written, twice in a row: depot served and checked, installer trusting it by its FQDN, management certificate replaced; nothing left running, nothing unignored", async () => {
  const work = join(repo, 'rehearsal');
  const ports = { depot: await freePort(), installer: await freePort(), vc: await freePort() };
  const script = await rehearsal(work, ports);
  for (const round of [1, 2]) {
    const { code, stdout, stderr } = await runBash(script, { cwd: tmp.dir, env: env(), seconds: 180, file: join(tmp.dir, 'rehearsal.sh') });
    expect(code, `run ${round} stopped (exit ${code}):\n${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toMatch(/ACCEPT/);
    expect(stdout).toMatch(/imported: CN=depotkit private CA/);
    expect(stdout).toContain(`depot depot.lab.local:${ports.depot}: DEPOT_CONNECTION_SUCCESSFUL`);
    expect(stdout).toMatch(/Replaced the certificate of https:\/\/127\.0\.0\.1:\d+ [\s\S]*issued by CN=depotkit private CA[\s\S]*verified: trusted by the CA/);
    // The CA is made once and then reused.
    expect(stdout.includes('Made CA'), `run ${round}`).toBe(round === 1);
    expect(stdout + stderr).not.toContain('Dep0t-Secret');
    expect(stdout + stderr).not.toContain('VMware1!VMware1!');
    expect(await processesUnder(work), `run ${round} left processes running`).toEqual([]);
    for (const port of Object.values(ports)) expect(await portAccepts(port), `port ${port} after run ${round}`).toBe(false);
  }
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
    const script = await rehearsal(work, { depot, installer: await freePort(), vc: await freePort() });
    const { code, stdout, stderr } = await runBash(script, { cwd: tmp.dir, env: env(), seconds: 60, file: join(tmp.dir, 'busy.sh') });
    expect(code).toBe(1);
    expect(stderr).toContain(`port ${depot} is taken`);
    expect(stdout).toBe('');
    expect(await processesUnder(work)).toEqual([]);
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
}, 60_000);
