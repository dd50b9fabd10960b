/**
 * A vCenter among the consumers of a CA move: the new CA goes into its trusted root chains before
 * the served certificate switches, and after the switch its ESX depot syncs (vLCM fetching over the
 * new certificate) as its revalidation; the installer beside it moves as before. Real sockets:
 * `depotkit serve`, an installer simulator and a vCenter simulator.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MGMT_DEFAULT_USER, UMDS_PATCH_STORE_DIR, VCENTER_ROLE } from '../../src/constants.js';
import { sha256Fingerprint } from '../../src/cert/index.js';
import { makeEsxDemo } from '../../src/esx/demo.js';
import { moveDepotCa } from '../../src/procedures/index.js';
import { startMgmtSimulator, type MgmtSimulator } from '../../src/simulators/vcenter/index.js';
import { connectVcenterDepot, listVcenterTrust, trustVcenterCa } from '../../src/vcenter/index.js';
import { tempDir } from '../helpers/temp.js';
import { moveFixture, serveMoveOptions, type MoveFixture } from './ca-move-fixture.js';

const VC_PASSWORD_ENV = 'DEPOTKIT_TEST_VCENTER_PASSWORD';
const VC_PASSWORD = 'Vc-Adm1n-Secret!';

let tmp: { dir: string; cleanup: () => Promise<void> };
let fx: MoveFixture;
let vcenter: MgmtSimulator;
const connection = () => ({ server: vcenter.url, user: MGMT_DEFAULT_USER, password: VC_PASSWORD, serverCaPems: [vcenter.currentCertPem()] });

beforeAll(async () => {
  tmp = await tempDir('depotkit-ca-move-vcenter-');
  fx = await moveFixture(tmp.dir, 1);
  await makeEsxDemo(join(tmp.dir, 'depot', UMDS_PATCH_STORE_DIR), { vibs: 3, vibSize: 1024 });
  vcenter = await startMgmtSimulator({ users: { [MGMT_DEFAULT_USER]: VC_PASSWORD } });
  // Before the move: the vCenter trusts the old CA and syncs the ESX depot on the old certificate.
  await trustVcenterCa({ ...connection(), caPem: fx.oldCa.certPem });
  expect(await connectVcenterDepot({ ...connection(), depot: `${fx.addressUrl}/${UMDS_PATCH_STORE_DIR}/index.xml`, pollMs: 20 })).toMatchObject({ ok: true });
  process.env[VC_PASSWORD_ENV] = VC_PASSWORD;
}, 120_000);
afterAll(async () => {
  await vcenter?.close();
  await fx?.close();
  await tmp?.cleanup();
});

it('trusts the new CA on the vCenter before the switch and syncs its ESX depot after it; the installer moves as before', async () => {
  const vc = { name: 'vc-a', url: vcenter.url, role: VCENTER_ROLE, user: MGMT_DEFAULT_USER, passwordEnv: VC_PASSWORD_ENV, insecure: true } as const;
  const report = await moveDepotCa(serveMoveOptions(fx, { consumers: [...fx.targets, vc], removeOld: true }));
  expect(report.ok, JSON.stringify(report.phases, null, 1)).toBe(true);
  const rows = (phase: string) => report.phases.find((p) => p.phase === phase)?.rows ?? [];
  expect(rows('prove').map((r) => [r.name, r.role, r.ok])).toEqual([
    ['consumer-0', expect.any(String), true],
    ['vc-a', VCENTER_ROLE, true],
  ]);
  expect(rows('revalidate').find((r) => r.name === 'vc-a')).toMatchObject({ ok: true, result: { status: 'sync SUCCEEDED' } });
  // The old CA retires from the installer; the vCenter keeps its chain (nothing it fetches needs it, but it is not the installer's removal).
  expect(rows('retire').map((r) => r.name)).toEqual(['consumer-0']);
  const held = (await listVcenterTrust(connection())).chains.flatMap((c) => c.certificates.map((x) => x.sha256));
  expect(held).toContain(sha256Fingerprint(fx.newCa.certPem));
  // A sync on the new certificate now succeeds only through the new CA: the old one alone would not do.
  expect(await connectVcenterDepot({ ...connection(), depot: `${fx.addressUrl}/${UMDS_PATCH_STORE_DIR}/index.xml`, pollMs: 20 })).toMatchObject({
    action: 'unchanged',
    ok: true,
  });
}, 240_000);
