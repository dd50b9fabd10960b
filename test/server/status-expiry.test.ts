import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createCa, issueServerCert, type CaMaterial } from '../../src/cert/index.js';
import { startDepotServer } from '../../src/server/index.js';
import { customCa } from '../helpers/certs.js';
import { tempDir } from '../helpers/temp.js';
import { fetchRaw } from './helpers.js';
import { demoDepot } from './status-helpers.js';

// The status page says how long the served certificate and its CA have, as the JSON and as the page shows them.
const DAY = 86_400_000;
let dir: string;
let cleanup: () => Promise<void>;
let root: string;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('depotkit-status-expiry-'));
  root = join(dir, 'depot');
  await demoDepot(root);
});
afterAll(() => cleanup());

async function pageOf(ca: CaMaterial): Promise<{ json: Record<string, unknown>; html: string; leaf: string }> {
  const issued = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  const server = await startDepotServer({ root, host: '127.0.0.1', port: 0, tls: { certPem: issued.chainPem, keyPem: issued.keyPem } });
  try {
    const json = JSON.parse((await fetchRaw(server.url, '/', { ca: ca.certPem, headers: { Accept: 'application/json' } })).body.toString()) as Record<
      string,
      unknown
    >;
    const html = (await fetchRaw(server.url, '/', { ca: ca.certPem })).body.toString();
    return { json, html, leaf: issued.certPem };
  } finally {
    await server.close();
  }
}

const daysFrom = (servedAt: unknown, pem: string) =>
  Math.floor((new Date(new X509Certificate(pem).validTo).getTime() - new Date(servedAt as string).getTime()) / DAY);

it('shows the days left of the served certificate and of its CA, each in its own section', async () => {
  const ca = await createCa({ cn: 'Long CA', keySize: 2048 });
  const { json, html, leaf } = await pageOf(ca);
  const leafDays = daysFrom(json.servedAt, leaf);
  const caDays = daysFrom(json.servedAt, ca.certPem);
  expect(leafDays).toBeLessThan(caDays);
  expect(json).toMatchObject({ certificateDaysLeft: leafDays, caDaysLeft: caDays });
  const [server, itsCa] = html.split('<h3>Its CA</h3>');
  expect(server).toContain(`(${leafDays} days left)`);
  expect(itsCa).toContain(`(${caDays} days left)`);
});

it('marks a CA within 30 days of its end, and the certificate it cut short', async () => {
  const shortCa = customCa({ cn: 'Short CA', notAfter: new Date(Date.now() + 20 * DAY + 3_600_000) });
  const { json, html } = await pageOf(shortCa as CaMaterial);
  expect(json).toMatchObject({ certificateDaysLeft: 20, caDaysLeft: 20 });
  const [server, itsCa] = html.split('<h3>Its CA</h3>');
  expect(server).toContain('<span class="warn">20 days left</span>');
  expect(itsCa).toContain('<span class="warn">20 days left</span>');
});
