/**
 * The CA-move runbook's rehearsal runs as written: its shell block, unchanged
 * but for its folder and ports (free ones), with `depotkit` the built CLI. The
 * consumers know the depot as depot.lab.local, which this host does not
 * resolve; the move reaches it by address (`--as-host`), and each consumer
 * ends validated on the new CA alone, still set to depot.lab.local.
 */
import { lookup } from 'node:dns/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { expectNothingLeftRunning, rehearseRunbook, runbookRehearsal } from '../helpers/runbook.js';

const RUNBOOK = 'docs/runbooks/ca-move.md';

const rehearsal = runbookRehearsal('ca-move');

it('the CA-move rehearsal runs as written: a depot known by a name only the consumers resolve moves to the new CA, every phase ok; nothing left running', async () => {
  // The point of the rehearsal: the consumers' name for the depot does not resolve on this host.
  await expect(lookup('depot.lab.local')).rejects.toThrow();
  const run = await rehearseRunbook(rehearsal, RUNBOOK, join(rehearsal.dir(), 'ca-move'), ['depot_port', 'installer_port', 'manager_port'], 300);
  const { stdout, stderr, ports } = run;
  const named = `https://depot.lab.local:${ports.depot_port}`;
  const reached = `https://127.0.0.1:${ports.depot_port}`;
  // The dry run and the move both name the consumers' URL and where this host reaches it.
  expect(stdout.split('\n').filter((l) => l.startsWith(`Moving ${named} (reached here at ${reached}) to CN=New depot CA`))).toHaveLength(2);
  expect(stdout).toContain('Plan (nothing done):');
  for (const phase of ['plan', 'import', 'prove', 'switch', 'revalidate', 'retire']) expect(stdout).toMatch(new RegExp(`^${phase}: ok`, 'm'));
  expect(stdout).toMatch(/^ {2}installer {2}VcfInstaller 9\.1\.0\S* {2}ok {2}via trusted-certificates$/m);
  expect(stdout).toMatch(/^ {2}sddc-manager {2}SddcManager 9\.1\.1\S* {2}ok {2}via depot-settings$/m);
  expect(stdout).toContain('The depot is on the new CA; every consumer validated it.');
  // After it: check accepts the depot on the new CA by the consumers' name, and both consumers are on it by that name.
  expect(stdout).toMatch(/^ACCEPT: the installer would accept this depot \(0 warnings\)\.$/m);
  for (const [name, role] of [
    ['installer', 'VcfInstaller'],
    ['sddc-manager', 'SddcManager'],
  ]) {
    expect(stdout).toMatch(new RegExp(`^${name} +${role} 9\\.\\S+ +ok +depot depot\\.lab\\.local:${ports.depot_port}: DEPOT_CONNECTION_SUCCESSFUL`, 'm'));
  }
  expect(stdout).not.toMatch(new RegExp(`depot 127\\.0\\.0\\.1:${ports.depot_port}`));
  expect(stdout + stderr).not.toContain('Dep0t-Secret');
  expect(stdout + stderr).not.toContain('VMware1!VMware1!');

  await expectNothingLeftRunning(run);
}, 360_000);
