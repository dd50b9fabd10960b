import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UMDS_PATCH_STORE_DIR } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { startDepotServer } from '../../src/server/index.js';
import { tempDir } from '../helpers/temp.js';
import { fetchRaw } from '../server/helpers.js';
import { parsePrometheus, STATUS_JSON_SCHEMA } from '../server/status-helpers.js';
import { copyOf } from './helpers.js';

let base: string;
let cleanup: () => Promise<void>;
let pristine: string;

beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir('depotkit-esx-serve-'));
  pristine = join(base, 'pristine');
  await makeDemoDepot(pristine, { binarySize: 512, esx: true });
});
afterAll(() => cleanup());

/** What the status page (its JSON and HTML) and /metrics say of the ESX depot under `root`. */
async function looked(root: string) {
  const server = await startDepotServer({ root, host: '127.0.0.1', port: 0, metricsOpen: true });
  try {
    const json = JSON.parse((await fetchRaw(server.url, '/', { headers: { accept: 'application/json' } })).body.toString()) as Record<string, unknown>;
    const html = (await fetchRaw(server.url, '/')).body.toString();
    const metrics = parsePrometheus((await fetchRaw(server.url, '/metrics')).body.toString()).samples.filter((s) => s.name === 'depotkit_esx_vibs');
    return { json, html, metrics };
  } finally {
    await server.close();
  }
}

/** The gauge of the demo depot's VIBs of `product` in `state`. */
const vibGauge = (product: string, state: string, value: number) => ({
  name: 'depotkit_esx_vibs',
  labels: { depot: UMDS_PATCH_STORE_DIR, product, version: '9.*', state },
  value,
});

describe("serve's status page and /metrics show the ESX depot beside PROD/", () => {
  it('its products, VIB counts and completeness, in the JSON (schema-valid), the HTML and the gauges', async () => {
    const { json, html, metrics } = await looked(pristine);
    const validate = new Ajv({ allErrors: true }).compile(STATUS_JSON_SCHEMA);
    expect(validate(json), JSON.stringify(validate.errors)).toBe(true);
    expect(json.esx).toMatchObject([
      {
        folder: UMDS_PATCH_STORE_DIR,
        index: `${UMDS_PATCH_STORE_DIR}/index.xml`,
        ok: true,
        vibs: 6,
        present: 6,
        products: [
          { productId: 'embeddedEsx', version: '9.*', state: 'complete', components: 3 },
          { productId: 'esxio', version: '9.*', state: 'complete', components: 3 },
        ],
      },
    ]);
    expect(html).toContain('ESXi depots for vSphere Lifecycle Manager');
    expect(html).toContain('embeddedEsx 9.*: complete (6 VIBs)');
    expect(metrics).toContainEqual(vibGauge('esxio', 'present', 6));
  });

  it('a VIB gone: the depot marked incomplete, the missing VIB named and counted', async () => {
    const root = await copyOf(pristine, join(base, 'one-gone'));
    const vib = 'vib20/demo-esxi-0001/DKD_bootbank_demo-esxi-0001_9.0.0-0.0.24755229.vib';
    await rm(join(root, UMDS_PATCH_STORE_DIR, vib));
    const { json, html, metrics } = await looked(root);
    const [depot] = json.esx as { ok: boolean; present: number; problems: string[] }[];
    expect(depot).toMatchObject({ ok: false, present: 5 });
    expect(depot!.problems[0]).toContain(vib);
    expect(html).toContain('1 of 6 VIBs missing');
    expect(metrics).toContainEqual(vibGauge('embeddedEsx', 'missing', 1));
  });

  it('no ESX depot: no section and no series', async () => {
    const root = await copyOf(pristine, join(base, 'no-esx'));
    await rm(join(root, UMDS_PATCH_STORE_DIR), { recursive: true });
    const { json, html, metrics } = await looked(root);
    expect(json.esx).toEqual([]);
    expect(html).not.toContain('ESXi depots');
    expect(metrics).toEqual([]);
  });
});
