import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { createCa, issueServerCert, type CaMaterial } from '../../src/cert/index.js';
import { checkDepot } from '../../src/check/check.js';
import { leafGivenAsCa } from '../../src/check/given-ca.js';
import { startDepotServer } from '../../src/server/index.js';
import { tempDir } from '../helpers/temp.js';

// What the check reports of certificates stays as it was whichever reader reads them: fingerprints as
// openssl shows them, names as the certificate holds them, IPv6 addresses as people write them.
const HOST = 'depot.test';
let ca: CaMaterial;
let root: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir());
  await makeDemoDepot(join(root, 'depot'), { binarySize: 1024 });
  ca = await createCa({ keySize: 2048 });
});
afterAll(() => cleanup());

it("reports the served certificate's names, its IPv6 addresses compressed (fd00::2), and its SHA-256 as openssl shows it", async () => {
  const issued = await issueServerCert(ca, { dns: [HOST], ips: ['127.0.0.1', 'fd00:0:0::2'], keySize: 2048 });
  const server = await startDepotServer({ root: join(root, 'depot'), host: '127.0.0.1', port: 0, tls: { certPem: issued.chainPem, keyPem: issued.keyPem } });
  try {
    const result = await checkDepot(server.url, { asHost: HOST, caPems: [] });
    expect(result.tls).toMatchObject({ dnsNames: [HOST], ipAddresses: ['127.0.0.1', 'fd00::2'], sha256: new X509Certificate(issued.certPem).fingerprint256 });
    const notGiven = result.findings.find((f) => f.id === 'tls.ca.not-given')!;
    expect(notGiven.evidence).toEqual({
      issuer: new X509Certificate(ca.certPem).subject.split('\n').join(', '),
      // The top of the chain the server sends: here the CA itself.
      topCertificateSha256: new X509Certificate(ca.certPem).fingerprint256,
      chainsToPublicRoot: false,
    });
  } finally {
    await server.close();
  }
});

it('a leaf given as CA: its subject, issuer and SHA-256 as evidence', async () => {
  const issued = await issueServerCert(ca, { dns: [HOST], keySize: 2048 });
  const [finding] = leafGivenAsCa(issued.certPem, [], HOST, [issued.certPem]);
  const x509 = new X509Certificate(issued.certPem);
  expect(finding!.evidence).toEqual({
    subject: `CN=${HOST}`,
    issuer: x509.issuer.split('\n').join(', '),
    sha256: x509.fingerprint256,
    servedCertificate: true,
  });
});
