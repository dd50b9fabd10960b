/**
 * vCenter as a consumer of the ESX depot: `sim vcenter` serves vLCM's depot API and syncs a depot
 * by fetching it as vLCM does (TLS trusted only through its trusted root chains, the host name
 * checked); depotkit's `connectVcenterDepot` adds the depot once, syncs it, and says precisely
 * when the depot's CA is to be trusted first. Real sockets: a served demo ESX depot, the simulator.
 */
import { mkdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CIS_TASK_STATUS, MGMT_HEADERS, UMDS_PATCH_STORE_DIR, VLCM_API, VLCM_DEPOT_INACCESSIBLE } from '../../src/constants.js';
import { issueServerCert } from '../../src/cert/index.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { startDepotServer, type DepotServer } from '../../src/server/index.js';
import type { MgmtSimulator } from '../../src/simulators/vcenter/index.js';
import { MgmtClient, connectVcenterDepot, trustVcenterCa, untrustVcenterCa } from '../../src/vcenter/index.js';
import { useTempDir } from '../helpers/temp.js';
import { until } from '../helpers/poll.js';
import { bundleOf } from '../esx/helpers.js';
import { PASSWORD, USER, basic, call, startSim, testCa } from './helpers.js';

const INDEX = `/${UMDS_PATCH_STORE_DIR}/index.xml`;
const DEMO_COMPONENTS = ['DEMO-ESXi', 'DEMO-host-tools', 'DEMO-nic-driver'];

const tmp = useTempDir('depotkit-vcenter-depot-');
let depot: DepotServer;
let sim: MgmtSimulator;

beforeAll(async () => {
  const root = join(tmp.dir, 'depot');
  await makeDemoDepot(root, { binarySize: 512, esx: true });
  // An offline bundle of the same ESX depot, served beside it.
  await bundleOf(join(root, UMDS_PATCH_STORE_DIR), join(tmp.dir, 'demo-depot.zip'));
  await mkdir(join(root, 'bundles'));
  await rename(join(tmp.dir, 'demo-depot.zip'), join(root, 'bundles', 'demo-depot.zip'));
  const ca = await testCa();
  const issued = await issueServerCert(ca, { dns: ['depot.test'], ips: ['127.0.0.1'], keySize: 2048 });
  depot = await startDepotServer({
    root,
    host: '127.0.0.1',
    port: 0,
    tls: { certPem: issued.chainPem, keyPem: issued.keyPem },
    auth: { user: 'depot', password: 'not for vLCM' },
    openPrefixes: [UMDS_PATCH_STORE_DIR, 'bundles'],
  });
  sim = await startSim();
}, 120_000);
afterAll(async () => {
  await sim?.close();
  await depot?.close();
});

const connection = () => ({ server: sim.url, user: USER, password: PASSWORD, serverCaPems: [sim.currentCertPem()] });

describe('vcenter depot against sim vcenter and a served demo ESX depot', () => {
  it('before the CA is trusted: the depot is added, the sync fails as vLCM fails, and the report says to run vcenter trust', async () => {
    const report = await connectVcenterDepot({ ...connection(), depot: `${depot.url}${INDEX}`, pollMs: 20 });
    expect(report).toMatchObject({ kind: 'online', action: 'added', ok: false, components: [] });
    expect(report.sync.status).toBe(CIS_TASK_STATUS.failed);
    expect(report.sync.messages[0]).toBe(`${VLCM_DEPOT_INACCESSIBLE}.`);
    expect(report.sync.messages[1]).toContain('certificate verify failed');
    expect(report.problem).toContain("vCenter does not trust the CA of the depot's certificate");
    expect(report.fix).toBe(
      `Put the depot's CA there first with \`trustVcenterCa\` \`server\` ${sim.url} \`caPems\` <depot-ca.pem>, then connect the depot again.`,
    );
  });

  it('once the CA is trusted: nothing added again, the sync succeeds and the components and versions are listed', async () => {
    const ca = await testCa();
    await trustVcenterCa({ ...connection(), caPem: ca.certPem });
    const progress: string[] = [];
    const report = await connectVcenterDepot({ ...connection(), depot: `${depot.url}${INDEX}`, pollMs: 20, onProgress: (p) => progress.push(p.status) });
    expect(report).toMatchObject({ kind: 'online', action: 'unchanged', ok: true, sync: { status: CIS_TASK_STATUS.succeeded, messages: [] } });
    expect(report.components.map((c) => c.name).sort()).toEqual(DEMO_COMPONENTS);
    expect(report.components.every((c) => c.versions.length === 1 && /^9\.0\.0-/.test(c.versions[0]!))).toBe(true);
    expect(progress.at(-1)).toBe(CIS_TASK_STATUS.succeeded);
    // One online depot, whatever the number of runs.
    const client = await MgmtClient.connect({ ...connection(), trust: { caPems: [sim.currentCertPem()] } });
    try {
      expect(Object.values((await client.apiCall('list', 'GET', VLCM_API.online)) as object)).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it('a host name the certificate does not hold: the sync fails on the name, not on trust', async () => {
    const report = await connectVcenterDepot({ ...connection(), depot: `${depot.url.replace('127.0.0.1', 'localhost')}${INDEX}`, pollMs: 20 });
    expect(report.ok).toBe(false);
    expect(report.problem).toContain('it does not name the host of https://localhost:');
    // The depot at the right name is listed still; the one that failed kept nothing.
    expect(report.components.map((c) => c.name).sort()).toEqual(DEMO_COMPONENTS);
    const client = await MgmtClient.connect({ ...connection(), trust: { caPems: [sim.currentCertPem()] } });
    try {
      const listed = (await client.apiCall('list', 'GET', VLCM_API.online)) as Record<string, { location: string }>;
      for (const [id, d] of Object.entries(listed)) if (d.location.includes('localhost')) await client.apiCall('delete', 'DELETE', `${VLCM_API.online}/${id}`);
    } finally {
      await client.close();
    }
  });

  it('the UMDS depot chosen: set once, synced alone, online depots noted as ignored', async () => {
    const first = await connectVcenterDepot({ ...connection(), depot: `${depot.url}${INDEX}`, umds: true, pollMs: 20 });
    expect(first).toMatchObject({ kind: 'umds', action: 'added', ok: true });
    expect(first.components.map((c) => c.name).sort()).toEqual(DEMO_COMPONENTS);
    expect(await connectVcenterDepot({ ...connection(), depot: `${depot.url}${INDEX}`, umds: true, pollMs: 20 })).toMatchObject({
      action: 'unchanged',
      ok: true,
    });
    const online = await connectVcenterDepot({ ...connection(), depot: `${depot.url}${INDEX}`, pollMs: 20 });
    expect(online.notes[0]).toContain('vCenter ignores its online depots');
    const client = await MgmtClient.connect({ ...connection(), trust: { caPems: [sim.currentCertPem()] } });
    try {
      await client.apiCall('unset', 'DELETE', VLCM_API.umds);
    } finally {
      await client.close();
    }
  });

  it('an offline bundle pulled as a task, its components listed; a bundle that is not there fails the task', async () => {
    const client = await MgmtClient.connect({ ...connection(), trust: { caPems: [sim.currentCertPem()] } });
    const wait = (task: unknown) =>
      until(
        async () => (await client.apiCall('task', 'GET', `${VLCM_API.tasks}/${String(task)}`)) as { status: string; result?: unknown; error?: unknown },
        (info) => info.status === CIS_TASK_STATUS.succeeded || info.status === CIS_TASK_STATUS.failed,
        `task ${String(task)} to end`,
        { everyMs: 20 },
      );
    try {
      const offline = `${VLCM_API.offline}?${VLCM_API.taskQuery}=true`;
      const pulled = await wait(await client.apiCall('pull', 'POST', offline, { source_type: 'PULL', location: `${depot.url}/bundles/demo-depot.zip` }));
      expect(pulled).toMatchObject({ status: CIS_TASK_STATUS.succeeded, result: { depot: expect.any(String) } });
      const missing = await wait(
        await client.apiCall('pull', 'POST', offline, { source_type: 'PULL', location: `${depot.url}/${UMDS_PATCH_STORE_DIR}/none-depot.zip` }),
      );
      expect(missing).toMatchObject({ status: CIS_TASK_STATUS.failed, error: { messages: [{ default_message: `${VLCM_DEPOT_INACCESSIBLE}.` }, {}] } });
      await client.apiCall('delete', 'DELETE', `${VLCM_API.offline}/${(pulled.result as { depot: string }).depot}`);
    } finally {
      await client.close();
    }
  });

  it('a depot behind credentials is refused as vLCM (which sends none) is; the CA removed, the sync fails again', async () => {
    const closed = await connectVcenterDepot({ ...connection(), depot: `${depot.url}/PROD/index.xml`, pollMs: 20 });
    expect(closed.ok).toBe(false);
    expect(closed.sync.messages.join(' ')).toContain('HTTP Error 401');
    await removeOnline(`${depot.url}/PROD/index.xml`);
    await untrustVcenterCa({ ...connection(), caPem: (await testCa()).certPem });
    const again = await connectVcenterDepot({ ...connection(), depot: `${depot.url}${INDEX}`, pollMs: 20 });
    expect(again).toMatchObject({ action: 'unchanged', ok: false });
    expect(again.problem).toContain('not among vCenter');
  });

  it('the depot API asks for a session as every other route does', async () => {
    expect((await call(sim, 'GET', VLCM_API.online)).status).toBe(401);
    expect((await call(sim, 'POST', `${VLCM_API.depots}?action=sync&vmw-task=true`)).status).toBe(401);
    const login = await call(sim, 'POST', '/api/session', { headers: { authorization: basic() } });
    const session = { [MGMT_HEADERS.sessionId]: login.body as string };
    expect(await call(sim, 'GET', `${VLCM_API.content}/base-images`, { headers: session })).toEqual({ status: 200, body: [] });
    expect((await call(sim, 'POST', VLCM_API.online, { headers: session, body: { location: 'ftp://x/index.xml' } })).status).toBe(400);
    expect((await call(sim, 'GET', `${VLCM_API.tasks}/none`, { headers: session })).status).toBe(404);
  });
});

async function removeOnline(location: string): Promise<void> {
  const client = await MgmtClient.connect({ ...connection(), trust: { caPems: [sim.currentCertPem()] } });
  try {
    const listed = (await client.apiCall('list', 'GET', VLCM_API.online)) as Record<string, { location: string }>;
    for (const [id, d] of Object.entries(listed)) if (d.location === location) await client.apiCall('delete', 'DELETE', `${VLCM_API.online}/${id}`);
  } finally {
    await client.close();
  }
}
