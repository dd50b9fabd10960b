/**
 * How the simulated installer and SDDC Manager name components, as the vendor's own clients select
 * them: the Python SDK download sample keeps release components by `name`, the Ansible collection's
 * download playbook keeps download-status rows by `componentType`. SDDC Manager's binaries sit under
 * the depot folder SDDC_MANAGER_VCF, but both clients ask for SDDC_MANAGER. And a depot update
 * alone syncs nothing: the releases and bundles appear after the sync that clients ask for.
 */
import { describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEPOT_PATHS } from '../../src/constants.js';
import { withSim } from '../helpers/installer-sim.js';
import { until } from '../helpers/poll.js';
import { ANSIBLE_COMPONENT_API_MAP, SDK_FIRST_INSTANCE_COMPONENTS } from '../helpers/public-clients.js';
import { call, depotSettings, login, type TestDepot } from '../installer/helpers.js';
import type { InstallerSimulator } from '../../src/simulators/installer/index.js';
import { useTestDepot } from '../helpers/installer-sim.js';

const SYNC = '/v1/system/settings/depot/depot-sync-info';

let dir: string;
let depot: TestDepot;
useTestDepot('depotkit-sim-names-', (started) => ({ dir, depot } = started));

interface StatusRow {
  bundleId: string;
  componentType: string;
  downloadStatus: string;
}
interface ComponentsPage {
  elements: Array<{ components: Array<{ name: string; versions: Array<{ artifacts: { bundles: Array<{ id: string }> } }> }> }>;
}

/** Trust the depot's CA and set the depot, as every client does first. */
async function setDepot(sim: InstallerSimulator, token: string): Promise<void> {
  await call(sim, 'POST', '/v1/sddc-manager/trusted-certificates', {
    token,
    body: { certificate: depot.ca.certPem, certificateUsageType: 'TRUSTED_FOR_OUTBOUND' },
  });
  expect((await call(sim, 'PUT', '/v1/system/settings/depot', { token, body: depotSettings(depot.host, depot.port) })).status).toBe(202);
}

async function syncNow(sim: InstallerSimulator, token: string): Promise<void> {
  expect((await call(sim, 'PATCH', SYNC, { token })).status).toBe(202);
  const status = await until(
    async () => ((await call(sim, 'GET', SYNC, { token })).body as { syncStatus: string }).syncStatus,
    (s) => s === 'SYNCED' || s === 'SYNC_FAILED',
    'the sync',
  );
  expect(status).toBe('SYNCED');
}

/** The catalog's SDDC Manager bundles, by the file names the depot holds them under. */
async function catalogSddcManagerVersions(): Promise<string[]> {
  const catalog = JSON.parse(await readFile(join(dir, 'depot', DEPOT_PATHS.catalog), 'utf8')) as {
    patches: Record<string, Array<{ productVersion: string }>>;
  };
  return (catalog.patches.SDDC_MANAGER_VCF ?? []).map((v) => v.productVersion);
}

describe.each(['installer', 'sddc-manager'] as const)('component names on the %s', (role) => {
  it('are those the Python SDK sample and the Ansible playbook select SDDC Manager and vCenter by', async () => {
    expect(await catalogSddcManagerVersions()).not.toEqual([]);
    await withSim(
      async (sim) => {
        const { accessToken: token } = await login(sim);
        await setDepot(sim, token);
        await syncNow(sim, token);
        const version = ((await call(sim, 'GET', '/v1/releases', { token })).body as { elements: Array<{ version: string }> }).elements[0]!.version;

        // get_latest_product_release_components: the release's components kept by name.
        const page = (
          await call(sim, 'GET', `/v1/releases/VCF/release-components?releaseVersion=${version}&imageType=INSTALL&automatedInstall=true`, { token })
        ).body as ComponentsPage;
        const names = page.elements[0]!.components.map((c) => c.name);
        expect(names).toContain('SDDC_MANAGER');
        expect(names).not.toContain('SDDC_MANAGER_VCF');
        const kept = page.elements[0]!.components.filter((c) => SDK_FIRST_INSTANCE_COMPONENTS.includes(c.name));
        const sddcIds = kept.find((c) => c.name === 'SDDC_MANAGER')!.versions.flatMap((v) => v.artifacts.bundles.map((b) => b.id));
        expect(sddcIds.length).toBeGreaterThan(0);

        // add_bundles_installer.yml asked for sddc-manager and vcenter: download-status rows by componentType.
        const wanted = ['sddc-manager', 'vcenter'].map((c) => ANSIBLE_COMPONENT_API_MAP[c]);
        const rows = ((await call(sim, 'GET', `/v1/bundles/download-status?releaseVersion=${version}`, { token })).body as { elements: StatusRow[] }).elements;
        const selected = rows.filter((r) => wanted.includes(r.componentType));
        expect(new Set(selected.map((r) => r.componentType))).toEqual(new Set(['SDDC_MANAGER', 'VCENTER']));
        expect(selected.filter((r) => r.componentType === 'SDDC_MANAGER').map((r) => r.bundleId)).toEqual(sddcIds);

        // The bundle list names the component the same way (the collection's product_type filter).
        const bundle = (await call(sim, 'GET', `/v1/bundles/${sddcIds[0]}`, { token })).body as { components: Array<{ type: string }> };
        expect(bundle.components[0]!.type).toBe('SDDC_MANAGER');
      },
      { role },
    );
  }, 60_000);

  it('appear only after a sync: the depot update alone syncs nothing', async () => {
    await withSim(
      async (sim) => {
        const { accessToken: token } = await login(sim);
        await setDepot(sim, token);
        // What a download playbook run right after the depot settings finds.
        const sync = (await call(sim, 'GET', SYNC, { token })).body as { syncStatus?: string };
        expect(sync.syncStatus).not.toBe('SYNCED');
        expect((await call(sim, 'GET', '/v1/releases', { token })).status).toBe(404);
        expect(((await call(sim, 'GET', '/v1/bundles/download-status', { token })).body as { elements: unknown[] }).elements).toEqual([]);
        await syncNow(sim, token);
        expect(((await call(sim, 'GET', '/v1/bundles/download-status', { token })).body as { elements: unknown[] }).elements.length).toBeGreaterThan(0);
      },
      { role },
    );
  }, 60_000);
});
