/**
 * The new-release runbook's rehearsal runs as written: its shell block,
 * unchanged but for its folder and ports (free ones), with `depotkit` the
 * built CLI. The release is packed, unpacked into the served depot and
 * verified; connect-depot has both consumers sync again because the catalog
 * changed since their last sync, each lists it and downloads it.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { expectNothingLeftRunning, rehearseRunbook, runbookRehearsal } from '../helpers/runbook.js';

const RUNBOOK = 'docs/runbooks/new-release.md';

const rehearsal = runbookRehearsal('new-release');

it('the new-release rehearsal runs as written: both consumers re-sync because the catalog changed, list the new release and download it; nothing left running', async () => {
  const run = await rehearseRunbook(rehearsal, RUNBOOK, join(rehearsal.dir(), 'new-release'), ['depot_port', 'installer_port', 'manager_port'], 400);
  const { stdout, stderr, ports } = run;
  // The depot was asked for its catalog's date: no warning that it could not be.
  expect(stderr).not.toContain("catalog's date");
  for (const [name, role] of [
    ['installer', 'VcfInstaller'],
    ['sddc-manager', 'SddcManager'],
  ]) {
    // Connected and synced before the release, with 9.0 only.
    expect(stdout).toMatch(
      new RegExp(
        `^${name} +${role} 9\\.\\S+ +ok +depot 127\\.0\\.0\\.1:${ports.depot_port}: DEPOT_CONNECTION_SUCCESSFUL\\n(?: {4}.*\\n)*? {4}releases: 9\\.0\\.0\\.0$`,
        'm',
      ),
    );
    // After it: nothing sent for the settings, a new sync because the catalog changed, and the new release.
    expect(stdout).toMatch(
      new RegExp(
        `^${name} +${role} 9\\.\\S+ +ok +depot 127\\.0\\.0\\.1:${ports.depot_port}: DEPOT_CONNECTION_SUCCESSFUL \\(already set, nothing sent\\)\\n` +
          `(?: {4}.*\\n)*? {4}sync: SYNCED \\(\\S+\\): settings unchanged; the depot's catalog changed since the last sync at \\S+: re-synced\\n {4}releases: 9\\.1\\.0\\.0$`,
        'm',
      ),
    );
    expect(stdout).toMatch(new RegExp(`^${name} +${role} 9\\.\\S+ +ok +releases: 9\\.1\\.0\\.0$`, 'm'));
    expect(stdout).toMatch(new RegExp(`^${name} +${role} 9\\.\\S+ +ok +release 9\\.1\\.0\\.0 \\(INSTALL\\): (\\d+) of \\1 bundles downloaded`, 'm'));
  }
  expect(stdout).toContain('OK: ');
  expect(stdout + stderr).not.toContain('Dep0t-Secret');
  expect(stdout + stderr).not.toContain('VMware1!VMware1!');

  await expectNothingLeftRunning(run);
}, 480_000);
