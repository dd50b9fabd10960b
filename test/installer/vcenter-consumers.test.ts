/**
 * vCenters in the one inventory of consumers, beside an installer: `installer connect-depot` (a
 * new release's step) gives each a row with its role and version, the installer's as before and
 * the vCenter's with its ESX depots synced again; a command of the depot API alone says of a
 * vCenter's row that it is one, and sends it nothing. Real sockets: a served demo depot with its
 * ESX depot open, an installer simulator and a vCenter simulator.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CIS_TASK_STATUS, MGMT_DEFAULT_USER, UMDS_PATCH_STORE_DIR, VCENTER_ROLE } from '../../src/constants.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { listReleases, loadInventory, type FleetRow } from '../../src/installer/index.js';
import { startDepotServer, type DepotServer } from '../../src/server/index.js';
import { startInstallerSimulator, type InstallerSimulator } from '../../src/simulators/installer/index.js';
import { startMgmtSimulator, type MgmtSimulator } from '../../src/simulators/vcenter/index.js';
import { connectVcenterDepot, trustVcenterCa } from '../../src/vcenter/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER, asCommandLine, simTls } from './helpers.js';
import { runOnConsumers } from './commands.js';

const VC_PASSWORD = 'Vc-Adm1n-Secret!';

let tmp: { dir: string; cleanup: () => Promise<void> };
let depot: DepotServer;
let installer: InstallerSimulator;
let vcenter: MgmtSimulator;
let inventory: string;
const caFile = () => join(tmp.dir, 'depot-ca.pem');

beforeAll(async () => {
  tmp = await tempDir('depotkit-vcenter-consumers-');
  const root = join(tmp.dir, 'depot');
  await makeDemoDepot(root, { binarySize: 1024, esx: true, signingDir: join(tmp.dir, 'signing') });
  const ca = await createCa({ keySize: 2048 });
  await writeFile(caFile(), ca.certPem);
  const cert = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  depot = await startDepotServer({
    root,
    host: '127.0.0.1',
    port: 0,
    tls: { certPem: cert.chainPem, keyPem: cert.keyPem },
    auth: { user: DEPOT_USER, password: DEPOT_PASSWORD },
    openPrefixes: [UMDS_PATCH_STORE_DIR],
  });
  installer = await startInstallerSimulator({ users: { [USER]: PASSWORD }, tls: await simTls() });
  vcenter = await startMgmtSimulator({ users: { [MGMT_DEFAULT_USER]: VC_PASSWORD }, version: '9.0.1.0' });
  // The vCenter has the ESX depot already, as `vcenter depot` left it.
  const connection = { server: vcenter.url, user: MGMT_DEFAULT_USER, password: VC_PASSWORD, serverCaPems: [vcenter.currentCertPem()] };
  await trustVcenterCa({ ...connection, caPem: ca.certPem });
  expect(await connectVcenterDepot({ ...connection, depot: `${depot.url}/${UMDS_PATCH_STORE_DIR}/index.xml`, pollMs: 20 })).toMatchObject({ ok: true });

  await writeFile(join(tmp.dir, 'installer.pem'), installer.caPem);
  await writeFile(join(tmp.dir, 'vc.pem'), vcenter.currentCertPem());
  await writeFile(join(tmp.dir, 'installer.pass'), `${PASSWORD}\n`, { mode: 0o600 });
  await writeFile(join(tmp.dir, 'vc.pass'), `${VC_PASSWORD}\n`, { mode: 0o600 });
  await writeFile(join(tmp.dir, 'depot.pass'), `${DEPOT_PASSWORD}\n`, { mode: 0o600 });
  inventory = join(tmp.dir, 'site.yaml');
  await writeFile(
    inventory,
    [
      'consumers:',
      `  - { name: installer, url: "${installer.url}", role: installer, passwordFile: installer.pass, installerCa: installer.pem }`,
      `  - { name: vc-a, url: "${vcenter.url}", role: vcenter, passwordFile: vc.pass, installerCa: vc.pem }`,
      '',
    ].join('\n'),
  );
}, 120_000);
afterAll(async () => {
  await vcenter?.close();
  await installer?.close();
  await depot?.close();
  await tmp?.cleanup();
});

interface Report<T> {
  ok: boolean;
  installers: Array<FleetRow<T>>;
}

describe('vCenters in the inventory of consumers', () => {
  it("reads a vCenter's entry with its role and vCenter's administrator as the default user", async () => {
    const [, vc] = await loadInventory(inventory);
    expect(vc).toMatchObject({ name: 'vc-a', role: VCENTER_ROLE, user: MGMT_DEFAULT_USER });
  });

  it('connect-depot: the installer connected as before, the vCenter syncs its ESX depots again; one row each with role and version', async () => {
    const { code, stdout, stderr } = await runCli(
      [
        'installer',
        'connect-depot',
        '--inventory',
        inventory,
        '--depot-url',
        depot.url,
        '--depot-user',
        DEPOT_USER,
        '--depot-password-file',
        join(tmp.dir, 'depot.pass'),
        '--trust-ca',
        caFile(),
        '--json',
      ],
      { cwd: tmp.dir },
    );
    expect(code, stderr).toBe(0);
    const report = JSON.parse(stdout) as Report<Record<string, unknown>>;
    expect(report.installers.map((r) => [r.name, r.role, r.version, r.ok])).toEqual([
      ['installer', 'VcfInstaller', expect.any(String), true],
      ['vc-a', VCENTER_ROLE, '9.0.1.0', true],
    ]);
    expect(report.installers[0]!.result).toMatchObject({ status: 'DEPOT_CONNECTION_SUCCESSFUL' });
    const vc = report.installers[1]!.result as { sync: { status: string }; components: Array<{ name: string }> };
    expect(vc.sync.status).toBe(CIS_TASK_STATUS.succeeded);
    expect(vc.components.map((c) => c.name).sort()).toEqual(['DEMO-ESXi', 'DEMO-host-tools', 'DEMO-nic-driver']);
    expect(stdout + stderr).not.toContain(VC_PASSWORD);
  });

  it("a command of the depot API alone: the vCenter's row says it is one and nothing is sent; the installer's row is as before", async () => {
    const sessions = vcenter.sessionsCreated();
    const run = await runOnConsumers({ inventory }, async (client) => ({ ok: true, result: await listReleases(client) }));
    expect(run.ok).toBe(false);
    expect(run.rows[0]).toMatchObject({ name: 'installer', ok: true, role: 'VcfInstaller' });
    expect(run.rows[1]).toMatchObject({ name: 'vc-a', ok: false });
    expect(run.rows[1]!.error?.message).toBe('vc-a is a vCenter (role vcenter): this works on installers and SDDC Managers; nothing was sent to it.');
    expect(asCommandLine(run.rows[1]!.error?.fix)).toBe('A vCenter takes the ESX depot: depotkit vcenter depot.');
    expect(vcenter.sessionsCreated()).toBe(sessions);
  });
});
