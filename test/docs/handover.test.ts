/**
 * The SDDC Manager hand-over runbook's rehearsal runs as written: its shell
 * block, unchanged but for its folder and ports (free ones), with `depotkit`
 * the built CLI. The inventory names both consumers; each ends on the depot,
 * synced, and its row shows the role it answered.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { expectNothingLeftRunning, rehearseRunbook, runbookRehearsal } from '../helpers/runbook.js';

const RUNBOOK = 'docs/runbooks/sddc-manager-handover.md';

const rehearsal = runbookRehearsal('handover');

it('the hand-over rehearsal runs as written: both consumers trust the depot, connect it and sync; the rows name their roles; nothing left running', async () => {
  const run = await rehearseRunbook(rehearsal, RUNBOOK, join(rehearsal.dir(), 'handover'), ['depot_port', 'installer_port', 'manager_port'], 240);
  const { stdout, stderr, ports } = run;
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

  await expectNothingLeftRunning(run);
}, 300_000);
