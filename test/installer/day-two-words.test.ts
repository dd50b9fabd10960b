import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { issueServerCert } from '../../src/cert/index.js';
import { startDepotServer, type DepotServer } from '../../src/server/index.js';
import type { InstallerSimulator } from '../../src/simulators/installer/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER, depotCa, startSim } from './helpers.js';

describe('installer commands say what they could not do', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let sim: InstallerSimulator;
  let depot: DepotServer;
  let password: string;
  beforeAll(async () => {
    tmp = await tempDir('depotkit-installer-words-');
    await makeDemoDepot(join(tmp.dir, 'depot'), { binarySize: 1 });
    const cert = await issueServerCert(await depotCa(), { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
    depot = await startDepotServer({
      root: join(tmp.dir, 'depot'),
      host: '127.0.0.1',
      port: 0,
      tls: { certPem: cert.chainPem, keyPem: cert.keyPem },
      auth: { user: DEPOT_USER, password: DEPOT_PASSWORD },
    });
    sim = await startSim();
    password = join(tmp.dir, 'admin.pass');
    await writeFile(password, `${PASSWORD}\n`, { mode: 0o600 });
  });
  afterAll(async () => {
    await sim?.close();
    await depot?.close();
    await tmp?.cleanup();
  });

  it('installer status without --ca and no depot set says the depot CA was not checked, and why', async () => {
    const r = await runCli(['installer', 'status', '--installer', sim.url, '--insecure', '--user', USER, '--password-file', password]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("depot CA: not checked: no depot is set; pass --ca with the depot's CA to check it");
  });

  it('--installer pointed at a depot says it does not answer as an installer or SDDC Manager', async () => {
    const r = await runCli([
      'installer',
      'status',
      '--installer',
      `https://127.0.0.1:${depot.port}`,
      '--insecure',
      '--user',
      USER,
      '--password-file',
      password,
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/does not answer as an installer or SDDC Manager: its log-in answered HTTP 40[45], as a web server does\./);
    expect(r.stdout).toContain('Check the URL given as --installer: the installer or SDDC Manager, not the depot.');
  });
});
