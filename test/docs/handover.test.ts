/**
 * The SDDC Manager hand-over runbook's rehearsal runs as written: its shell
 * block, unchanged but for its folder and ports (free ones), with `depotkit`
 * the built CLI. The inventory names both consumers; each ends on the depot,
 * synced, and its row shows the role it answered.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadInventory } from '../../src/installer/index.js';
import { tempDir } from '../helpers/cli.js';
import { assignedNames, freePort, portAccepts, processesUnder, runBash, setVariables, shBlockAfter, writeDepotkitShim } from '../helpers/readme.js';

const RUNBOOK = 'docs/runbooks/sddc-manager-handover.md';

/** Whether the inventory reads `consumers:` with a `role` per entry, which the runbook's inventory uses. */
async function inventoryNamesRoles(): Promise<boolean> {
  const dir = await mkdtemp(join(tmpdir(), 'depotkit-handover-inventory-'));
  try {
    await writeFile(join(dir, 'consumers.yaml'), 'consumers:\n  - { url: https://127.0.0.1:1, role: sddc-manager }\n');
    return await loadInventory(join(dir, 'consumers.yaml')).then(
      () => true,
      () => false,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
// Runs once the inventory takes both consumers; until then the rehearsal would stop at its first inventory command.
const ready = await inventoryNamesRoles();

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

it.runIf(ready)(
  'the hand-over rehearsal runs as written: both consumers trust the depot, connect it and sync; the rows name their roles; nothing left running',
  async () => {
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
    expect(stdout).toContain('VcfInstaller');
    expect(stdout).toContain('SddcManager');
    expect(stdout).toContain('imported: CN=depotkit private CA');
    expect(stdout.match(/DEPOT_CONNECTION_SUCCESSFUL/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
    expect(stdout).toMatch(/SYNCED/);
    expect(stdout + stderr).not.toContain('Dep0t-Secret');
    expect(stdout + stderr).not.toContain('VMware1!VMware1!');

    expect(await processesUnder(work)).toEqual([]);
    for (const port of Object.values(ports)) expect(await portAccepts(port), `port ${port}`).toBe(false);
  },
  300_000,
);
