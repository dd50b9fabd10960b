/**
 * The ESX runbook's rehearsal runs as written: its shell block, unchanged but for its folder and
 * ports (free ones), with `depotkit` the built CLI. A demo ESX depot is verified, carried through
 * a folder, verified again, served open beside PROD/ and checked as vLCM reads it; a vCenter
 * simulator refuses the depot before its CA is trusted, then both vCenters trust it, sync it and
 * list the demo's components.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { expectNothingLeftRunning, rehearseRunbook, runbookRehearsal } from '../helpers/runbook.js';

const RUNBOOK = 'docs/runbooks/esx-vlcm.md';

const rehearsal = runbookRehearsal('esx-vlcm');

it('the ESX rehearsal runs as written: carried, verified, served open, refused before the trust, then every vCenter synced; nothing left running', async () => {
  const run = await rehearseRunbook(rehearsal, RUNBOOK, join(rehearsal.dir(), 'esx-vlcm'), ['depot_port', 'vc1_port', 'vc2_port'], 300);
  const { stdout, stderr, ports } = run;
  const index = `https://127.0.0.1:${ports.depot_port}/umds-patch-store/index.xml`;
  expect(stdout).toContain('ACCEPT');
  // The refusal before the trust names the cause and the command to run.
  expect(stdout).toMatch(
    new RegExp(`^https://127\\.0\\.0\\.1:${ports.vc1_port}: online depot online-1 ${index.replace(/\./g, '\\.')} added; sync FAILED\\.$`, 'm'),
  );
  expect(stdout).toContain("vCenter does not trust the CA of the depot's certificate");
  expect(stdout).toContain(`depotkit vcenter trust --server https://127.0.0.1:${ports.vc1_port} --ca <depot-ca.pem>`);
  // Then: the first vCenter's depot is there already, the second's is added; both list the demo's components.
  expect(stdout).toMatch(
    new RegExp(`^https://127\\.0\\.0\\.1:${ports.vc1_port}: online depot online-1 \\S+ already set, nothing sent; sync SUCCEEDED\\.$`, 'm'),
  );
  expect(stdout).toMatch(new RegExp(`^https://127\\.0\\.0\\.1:${ports.vc2_port}: online depot online-1 \\S+ added; sync SUCCEEDED\\.$`, 'm'));
  expect(stdout.match(/^ {2}component DEMO-ESXi 9\.0\.0-\S+$/gm)).toHaveLength(2);
  expect(stdout + stderr).not.toContain('VMware1!VMware1!');
  expect(stdout + stderr).not.toContain('Dep0t-Secret');

  await expectNothingLeftRunning(run);
}, 360_000);
