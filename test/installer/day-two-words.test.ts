import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusLines } from '../../src/cli/installer-output.js';
import type { InstallerSimulator } from '../../src/simulators/installer/index.js';
import { useTestDepot } from '../helpers/installer-sim.js';
import { PASSWORD, USER, asCommandLine, startSim, type TestDepot } from './helpers.js';
import { runOnConsumers, statusTask } from './commands.js';

describe('installer commands say what they could not do', () => {
  let dir: string;
  let sim: InstallerSimulator;
  let depot: TestDepot;
  let password: string;
  useTestDepot('depotkit-installer-words-', (started) => ({ dir, depot } = started));
  beforeAll(async () => {
    sim = await startSim();
    password = join(dir, 'admin.pass');
    await writeFile(password, `${PASSWORD}\n`, { mode: 0o600 });
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('installer status without --ca and no depot set says the depot CA was not checked, and why', async () => {
    const run = await runOnConsumers({ installer: sim.url, insecure: true, user: USER, passwordFile: password }, statusTask());
    expect(run.ok, JSON.stringify(run.rows)).toBe(true);
    expect(statusLines(run.rows[0]!.result!)).toContain("depot CA: not checked: no depot is set; pass --ca with the depot's CA to check it");
  });

  it('--installer pointed at a depot says it does not answer as an installer or SDDC Manager', async () => {
    const run = await runOnConsumers({ installer: `https://127.0.0.1:${depot.port}`, insecure: true, user: USER, passwordFile: password }, statusTask());
    expect(run.ok).toBe(false);
    const { message, fix } = run.rows[0]!.error!;
    expect(message).toMatch(/does not answer as an installer or SDDC Manager: its log-in answered HTTP 40[45], as a web server does\./);
    expect(asCommandLine(fix)).toContain('Check the URL given as --installer: the installer or SDDC Manager, not the depot.');
  });
});
