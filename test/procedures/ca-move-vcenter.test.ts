/**
 * vCenters among the consumers of a CA move: the new CA goes into their trusted root chains before
 * the served certificate switches, after the switch their ESX depots sync (vLCM fetching over the
 * new certificate) as their revalidation, and with `removeOld` the old CA leaves their chains by the
 * removal `vcenter trust --remove` makes; the installer beside them moves as before. Real sockets:
 * `depotkit serve`, an installer simulator and two vCenter simulators.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MGMT_DEFAULT_USER, UMDS_PATCH_STORE_DIR, VCENTER_ROLE } from '../../src/constants.js';
import { sha256Fingerprint } from '../../src/cert/index.js';
import { makeEsxDemo } from '../../src/esx/demo.js';
import type { InstallerTarget } from '../../src/installer/index.js';
import { moveDepotCa, type CaMoveOptions, type CaMoveReport } from '../../src/procedures/index.js';
import { ConsumerSessions } from '../../src/procedures/ca-move/sessions.js';
import { retireOnVcenters } from '../../src/procedures/ca-move/vcenters.js';
import { startMgmtSimulator, type MgmtSimulator } from '../../src/simulators/vcenter/index.js';
import { connectVcenterDepot, listVcenterTrust, trustVcenterCa } from '../../src/vcenter/index.js';
import { closedPort } from '../helpers/ports.js';
import { useMoveFixture, serveMoveOptions, type MoveFixture } from './ca-move-fixture.js';

const VC_PASSWORD_ENV = 'DEPOTKIT_TEST_VCENTER_PASSWORD';
const VC_PASSWORD = 'Vc-Adm1n-Secret!';

let fx: MoveFixture;
let vcenters: MgmtSimulator[];
const connection = (vcenter: MgmtSimulator) => ({
  server: vcenter.url,
  user: MGMT_DEFAULT_USER,
  password: VC_PASSWORD,
  serverCaPems: [vcenter.currentCertPem()],
});
const entry = (name: string, url: string): InstallerTarget => ({
  name,
  url,
  role: VCENTER_ROLE,
  user: MGMT_DEFAULT_USER,
  passwordEnv: VC_PASSWORD_ENV,
  insecure: true,
});
const esxDepot = () => `${fx.addressUrl}/${UMDS_PATCH_STORE_DIR}/index.xml`;

/** The SHA-256 of every certificate among the vCenter's trusted root chains. */
async function held(vcenter: MgmtSimulator): Promise<string[]> {
  return (await listVcenterTrust(connection(vcenter))).chains.flatMap((c) => c.certificates.map((x) => x.sha256));
}

const rows = (report: CaMoveReport, phase: string) => report.phases.find((p) => p.phase === phase)?.rows ?? [];

function options(extra: Partial<CaMoveOptions> = {}): CaMoveOptions {
  return serveMoveOptions(fx, { consumers: [...fx.targets, entry('vc-a', vcenters[0]!.url), entry('vc-b', vcenters[1]!.url)], ...extra });
}

useMoveFixture('depotkit-ca-move-vcenter-', 1, (made) => (fx = made));
beforeAll(async () => {
  await makeEsxDemo(join(fx.dir, 'depot', UMDS_PATCH_STORE_DIR), { vibs: 3, vibSize: 1024 });
  vcenters = await Promise.all([0, 1].map(() => startMgmtSimulator({ users: { [MGMT_DEFAULT_USER]: VC_PASSWORD } })));
  // Before the move: each vCenter trusts the old CA and syncs the ESX depot on the old certificate.
  for (const vcenter of vcenters) {
    await trustVcenterCa({ ...connection(vcenter), caPem: fx.oldCa.certPem });
    expect(await connectVcenterDepot({ ...connection(vcenter), depot: esxDepot(), pollMs: 20 })).toMatchObject({ ok: true });
  }
  process.env[VC_PASSWORD_ENV] = VC_PASSWORD;
}, 120_000);
afterAll(async () => {
  await Promise.all((vcenters ?? []).map((v) => v.close()));
});

it('trusts the new CA on each vCenter before the switch and syncs its ESX depot after it; without `removeOld` the old CA stays', async () => {
  const report = await moveDepotCa(options());
  expect(report.ok, JSON.stringify(report.phases, null, 1)).toBe(true);
  expect(rows(report, 'prove').map((r) => [r.name, r.role, r.ok])).toEqual([
    ['consumer-0', expect.any(String), true],
    ['vc-a', VCENTER_ROLE, true],
    ['vc-b', VCENTER_ROLE, true],
  ]);
  expect(rows(report, 'revalidate').find((r) => r.name === 'vc-a')).toMatchObject({ ok: true, result: { status: 'sync SUCCEEDED' } });
  for (const vcenter of vcenters)
    expect(await held(vcenter)).toEqual(expect.arrayContaining([fx.newCa.certPem, fx.oldCa.certPem].map((pem) => sha256Fingerprint(pem))));
}, 240_000);

it('with `removeOld`, a vCenter that cannot be reached fails its retire row with a fix while the others are done; once it is back, the re-run removes it there; a run afresh changes nothing', async () => {
  const [newSha, oldSha] = [fx.newCa.certPem, fx.oldCa.certPem].map((pem) => sha256Fingerprint(pem));
  // The same move, carried on from its state: only the retire is left; vc-b is not where the inventory says.
  const down = `https://127.0.0.1:${await closedPort()}`;
  const consumers = [...fx.targets, entry('vc-a', vcenters[0]!.url), entry('vc-b', down)];
  const stopped = await moveDepotCa(options({ consumers, removeOld: true }));
  expect(stopped.ok).toBe(false);
  expect(stopped.resumed).toBe(true);
  const retired = rows(stopped, 'retire');
  expect(retired.map((r) => [r.name, r.ok])).toEqual([
    ['consumer-0', true],
    ['vc-a', true],
    ['vc-b', false],
  ]);
  expect(retired[1]).toMatchObject({ role: VCENTER_ROLE, result: [{ action: 'removed', sha256: oldSha, aliases: [expect.any(String)] }] });
  expect(retired[2]!.error?.message).toContain(down.replace('https://', ''));
  expect(retired[2]!.error?.fix).toEqual(expect.any(String));
  expect(await held(vcenters[0]!)).toContain(newSha);
  expect(await held(vcenters[0]!)).not.toContain(oldSha);
  expect(await held(vcenters[1]!)).toContain(oldSha);

  const completed = await moveDepotCa(options({ removeOld: true }));
  expect(completed.ok, JSON.stringify(completed.phases, null, 1)).toBe(true);
  // Only the row left undone is worked on.
  expect(rows(completed, 'retire').map((r) => [r.name, r.ok])).toEqual([['vc-b', true]]);
  for (const vcenter of vcenters) {
    expect(await held(vcenter)).toContain(newSha);
    expect(await held(vcenter)).not.toContain(oldSha);
  }
  // A sync on the new certificate now succeeds only through the new CA: the old one is gone.
  expect(await connectVcenterDepot({ ...connection(vcenters[1]!), depot: esxDepot(), pollMs: 20 })).toMatchObject({ action: 'unchanged', ok: true });

  // Afresh, as if the state were lost: every phase again, nothing left to remove, the chains as they were.
  const before = await Promise.all(vcenters.map(held));
  await rm(completed.plan.stateFile);
  const again = await moveDepotCa(options({ removeOld: true }));
  expect(again.ok, JSON.stringify(again.phases, null, 1)).toBe(true);
  expect(
    rows(again, 'retire')
      .filter((r) => r.role === VCENTER_ROLE)
      .map((r) => [r.name, r.ok, (r.result as Array<{ action: string }>)[0]!.action]),
  ).toEqual([
    ['vc-a', true, 'absent'],
    ['vc-b', true, 'absent'],
  ]);
  expect(await Promise.all(vcenters.map(held))).toEqual(before);
}, 240_000);

it('never removes a CA that anchors the chain the depot serves now: the row fails and the chain stays', async () => {
  // The new CA given as the one to retire (the plan refuses it when given as `oldCa`; here it is the removal that must).
  const sessions = new ConsumerSessions({ concurrency: 2, timeoutMs: 10_000 });
  const [row] = await retireOnVcenters(sessions, [entry('vc-a', vcenters[0]!.url)], {
    oldCaPem: fx.newCa.certPem,
    newCaPem: fx.newCa.certPem,
    timeoutMs: 10_000,
    reach: { origin: fx.addressUrl, serverName: '127.0.0.1' },
  }).finally(() => sessions.close());
  expect(row).toMatchObject({
    ok: false,
    error: {
      message: expect.stringMatching(
        /holds CN=New Depot CA \(SHA-256 .*\), which anchors the chain the depot at https:\/\/127\.0\.0\.1:\d+ serves now: nothing was removed\.$/,
      ),
    },
  });
  expect(await held(vcenters[0]!)).toContain(sha256Fingerprint(fx.newCa.certPem));
}, 60_000);
