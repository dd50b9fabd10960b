/**
 * The renewal runbook's rehearsal runs as written: its shell block, unchanged
 * but for its folder and ports (free ones), with `depotkit` the built CLI. The
 * installer knows the depot as depot.lab.local, which this host does not
 * resolve: `check` reaches it by address with `--as-host`. The expiring
 * certificate is warned about before the renewal and not after, and the
 * installer validates the renewed depot with nothing new to trust.
 */
import { lookup } from 'node:dns/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { expectNothingLeftRunning, rehearseRunbook, runbookRehearsal } from '../helpers/runbook.js';

const RUNBOOK = 'docs/runbooks/renewal.md';

const rehearsal = runbookRehearsal('renewal');

it('the renewal rehearsal runs as written: check warns of the expiry before, not after; the installer validates the renewed depot by its name; nothing left running', async () => {
  await expect(lookup('depot.lab.local')).rejects.toThrow();
  const run = await rehearseRunbook(rehearsal, RUNBOOK, join(rehearsal.dir(), 'renewal'), ['depot_port', 'installer_port'], 240);
  const { stdout, stderr, ports } = run;
  // Two checks, each by address for depot.lab.local: the first warns of the expiry, the second, on the renewed certificate, does not.
  const checks = stdout.split(`Depot https://127.0.0.1:${ports.depot_port}/\n`).slice(1);
  expect(checks).toHaveLength(2);
  expect(checks[0]).toMatch(/^WARN {2}cert\.expiring-soon: /m);
  expect(checks[1]).not.toContain('expiring-soon');
  for (const check of checks) {
    expect(check).toMatch(/certificate CN=depot\.lab\.local, issued by CN=depotkit private CA/);
    expect(check).toMatch(/^ACCEPT: the installer would accept this depot/m);
  }
  // The installer on the depot by its name, before the renewal and after it (validated again, nothing imported).
  const connected = new RegExp(`^installer +VcfInstaller 9\\.\\S+ +ok +depot depot\\.lab\\.local:${ports.depot_port}: DEPOT_CONNECTION_SUCCESSFUL`, 'gm');
  expect(stdout.match(connected)).toHaveLength(2);
  expect(stdout + stderr).not.toContain('Dep0t-Secret');
  expect(stdout + stderr).not.toContain('VMware1!VMware1!');

  await expectNothingLeftRunning(run);
}, 300_000);
