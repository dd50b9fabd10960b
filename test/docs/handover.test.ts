/**
 * The SDDC Manager hand-over runbook's rehearsal runs as written: its shell
 * block, unchanged but for its folder and ports (free ones), with `depotkit`
 * the built CLI. The inventory names both consumers; each ends on the depot,
 * synced, and its row shows the role it answered.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { assignedNames, freePort, portAccepts, processesUnder, runBash, setVariables, shBlockAfter, writeDepotkitShim } from '../helpers/readme.js';

const RUNBOOK = 'docs/runbooks/sddc-manager-handover.md';

let tmp: { dir: string; cleanup: () => Promise<void> };
let bin: string;
beforeAll(async () => {
  tmp = await tempDir('depotkit-handover-');
  bin = join(tmp.dir, 'bin');
  await mkdir(bin);
  await writeDepotkitShim(bin);
});
afterAll(async () => {
  // Whatever a failed run left, so that no server outlives the test.
  for (const pid of await processesUnder(tmp.dir)) process.kill(pid, 'SIGKILL');
  await tmp?.cleanup();
});

it('the hand-over rehearsal runs as written: both consumers trust the depot, connect it and sync; the rows name their roles; nothing left running', async () => {
  const block = await shBlockAfter(RUNBOOK, '## Rehearse it on one machine');
  expect(assignedNames(block).sort()).toEqual(['depot_port', 'installer_port', 'manager_port', 'work']);
  const work = join(tmp.dir, 'handover');
  const ports = { depot_port: await freePort(), installer_port: await freePort(), manager_port: await freePort() };
  const script = setVariables(block, { work, ...ports });

  const { code, stdout, stderr } = await runBash(script, {
    cwd: tmp.dir,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
    seconds: 240,
    file: join(tmp.dir, 'handover.sh'),
  });
  expect(code, `the rehearsal stopped (exit ${code}):\n${stdout}\n${stderr}`).toBe(0);
  // Each consumer's row names the role it answered; both end on the depot by its FQDN, synced.
  for (const [name, role] of [
    ['installer', 'VcfInstaller'],
    ['sddc-manager', 'SddcManager'],
  ]) {
    expect(stdout).toMatch(new RegExp(`^${name} +${role} 9\\.\\S+ +ok +imported: CN=depotkit private CA`, 'm'));
    expect(stdout).toMatch(
      new RegExp(`^${name} +${role} 9\\.\\S+ +ok +depot depot\\.lab\\.local:${ports.depot_port}: DEPOT_CONNECTION_SUCCESSFUL\\n +sync: SYNCED`, 'm'),
    );
  }
  expect(stdout).toContain('2 consumers: 2 ok, 0 failed.');
  expect(stdout + stderr).not.toContain('Dep0t-Secret');
  expect(stdout + stderr).not.toContain('VMware1!VMware1!');

  expect(await processesUnder(work)).toEqual([]);
  for (const port of Object.values(ports)) expect(await portAccepts(port), `port ${port}`).toBe(false);
}, 300_000);
