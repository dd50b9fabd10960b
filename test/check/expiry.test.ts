import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { createCa, issueServerCert, readCertificate, type CaMaterial } from '../../src/cert/index.js';
import { checkDepot, type CheckResult } from '../../src/check/check.js';
import { startDepotServer } from '../../src/server/index.js';
import { brokenServerCert, customCa } from '../helpers/certs.js';
import { tempDir } from '../helpers/temp.js';

// Expiry seen before it bites: each CA of the served chain, and the SAN's name and address as a pair,
// judged by `check` against a real depot server.
const HOST = 'depot.test';
const DAY = 86_400_000;
let root: string;
let cleanup: () => Promise<void>;
let ca: CaMaterial;

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir());
  await makeDemoDepot(join(root, 'depot'), { binarySize: 1024 });
  ca = await createCa({ keySize: 2048 });
});
afterAll(() => cleanup());

async function checkServing(pair: { certPem: string; keyPem: string }, options: Parameters<typeof checkDepot>[1]): Promise<CheckResult> {
  const server = await startDepotServer({ root: join(root, 'depot'), host: '127.0.0.1', port: 0, tls: pair });
  try {
    return await checkDepot(server.url, options);
  } finally {
    await server.close();
  }
}

const found = (r: CheckResult, id: string) => r.findings.filter((f) => f.id === id);

describe('each CA of the chain', () => {
  it('a CA that expires within 30 days is a finding with its subject and days left, and so is one that expires before the leaf', async () => {
    const shortCa = customCa({ cn: 'Short-lived CA', notAfter: new Date(Date.now() + 20 * DAY + 3_600_000) });
    // A leaf of 90 days, named wrong-host.invalid, checked as that name: it outlives its CA.
    const leaf = brokenServerCert(shortCa, 'wrong-host', HOST);
    const result = await checkServing(
      { certPem: leaf.certPem + shortCa.certPem, keyPem: leaf.keyPem },
      { asHost: 'wrong-host.invalid', caPems: [shortCa.certPem] },
    );
    const [soon] = found(result, 'tls.ca.expiring-soon');
    expect(soon).toMatchObject({ severity: 'warning', evidence: { ca: 'CN=Short-lived CA', daysLeft: 20 } });
    expect(soon!.message).toContain('CN=Short-lived CA');
    expect(soon!.message).toContain('20 day(s)');
    expect(found(result, 'tls.ca.expires-before-leaf')).toEqual([
      expect.objectContaining({ severity: 'warning', evidence: expect.objectContaining({ ca: 'CN=Short-lived CA' }) }),
    ]);
    // Warnings only: the installer accepts the depot today.
    expect(result.accepted).toBe(true);
  });

  it('without the CA given, the CAs the server sends are judged', async () => {
    const shortCa = customCa({ cn: 'Sent CA', notAfter: new Date(Date.now() + 10 * DAY + 3_600_000) });
    const leaf = brokenServerCert(shortCa, 'wrong-host', HOST);
    const result = await checkServing({ certPem: leaf.certPem + shortCa.certPem, keyPem: leaf.keyPem }, { asHost: 'wrong-host.invalid' });
    expect(found(result, 'tls.ca.expiring-soon').map((f) => f.evidence)).toEqual([expect.objectContaining({ ca: 'CN=Sent CA', daysLeft: 10 })]);
  });

  it('a CA far from its end, issuing a leaf that ends before it, is no finding', async () => {
    const issued = await issueServerCert(ca, { dns: [HOST], ips: ['127.0.0.1'], keySize: 2048 });
    const result = await checkServing({ certPem: issued.chainPem, keyPem: issued.keyPem }, { asHost: HOST, caPems: [ca.certPem] });
    expect(result.findings.filter((f) => f.id.startsWith('tls.ca.') || f.id.startsWith('tls.san.'))).toEqual([]);
  });

  it("the 30 days are counted from the check's `now`", async () => {
    const issued = await issueServerCert(ca, { dns: [HOST], ips: ['127.0.0.1'], keySize: 2048, days: 30 });
    const now = new Date(readCertificate(ca.certPem).notAfter.getTime() - 5 * DAY - 3_600_000);
    // The leaf has expired by then; the CA's own finding says how long the CA has.
    const result = await checkServing({ certPem: issued.chainPem, keyPem: issued.keyPem }, { asHost: HOST, caPems: [ca.certPem], now });
    expect(found(result, 'tls.ca.expiring-soon').map((f) => f.evidence?.daysLeft)).toEqual([5]);
  });
});

describe("the SAN's name and address", () => {
  it('the name without the address it resolves to is a warning', async () => {
    const issued = await issueServerCert(ca, { dns: [HOST], keySize: 2048 });
    const result = await checkServing({ certPem: issued.chainPem, keyPem: issued.keyPem }, { asHost: HOST, caPems: [ca.certPem] });
    expect(found(result, 'tls.san.address-missing')).toEqual([
      expect.objectContaining({ severity: 'warning', evidence: expect.objectContaining({ host: HOST, address: '127.0.0.1' }) }),
    ]);
    expect(found(result, 'tls.san.address-missing')[0]!.fix).toContain('`ips` 127.0.0.1');
    expect(result.accepted).toBe(true);
  });

  it('the address without any name is a warning, when the depot is given by its address', async () => {
    const issued = await issueServerCert(ca, { dns: [], ips: ['127.0.0.1'], allowIpOnly: true, keySize: 2048 });
    const result = await checkServing({ certPem: issued.chainPem, keyPem: issued.keyPem }, { caPems: [ca.certPem] });
    expect(found(result, 'tls.san.name-missing')).toEqual([
      expect.objectContaining({ severity: 'warning', evidence: expect.objectContaining({ host: '127.0.0.1' }) }),
    ]);
  });

  it('both is no finding', async () => {
    const issued = await issueServerCert(ca, { dns: [HOST], ips: ['127.0.0.1'], keySize: 2048 });
    const byName = await checkServing({ certPem: issued.chainPem, keyPem: issued.keyPem }, { asHost: HOST, caPems: [ca.certPem] });
    const byAddress = await checkServing({ certPem: issued.chainPem, keyPem: issued.keyPem }, { caPems: [ca.certPem] });
    expect([...byName.findings, ...byAddress.findings].filter((f) => f.id.startsWith('tls.san.'))).toEqual([]);
  });
});
