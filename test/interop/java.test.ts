import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { brokenServerCert } from '../helpers/certs.js';
import { JAVA, startJavaProbes } from '../helpers/java.js';
import { tempDir } from '../helpers/temp.js';
import { NGINX, startNginx } from '../helpers/nginx.js';

const HOST = 'depot.test';

/** Each probe: the certificate nginx serves and the trust store Java is given (the CA by default). */
type Served = { certPem: string; keyPem: string };

describe.skipIf(!JAVA || !NGINX)("Java's TLS stack, as the installer (strict host names, its own trust store)", () => {
  let cleanup: () => Promise<void>;
  /** Java's output per probe, by name: one JVM asks every server, each nginx serving one certificate. */
  const out: Record<string, string> = {};

  beforeAll(async () => {
    let base: string;
    ({ dir: base, cleanup } = await tempDir());
    const depot = join(base, 'depot');
    await makeDemoDepot(depot, { binarySize: 16 });
    const ca = await createCa({ keySize: 2048 });
    const other = await createCa({ keySize: 2048, cn: 'Another private CA' });
    const issued = await issueServerCert(ca, { dns: [HOST], keySize: 2048 });
    const sibling = await issueServerCert(ca, { dns: [HOST], keySize: 2048 });
    const files = { ca: join(base, 'ca.pem'), other: join(base, 'other-ca.pem'), leaf: join(base, 'leaf-only.pem') };
    await writeFile(files.ca, ca.certPem);
    await writeFile(files.other, other.certPem);
    await writeFile(files.leaf, issued.certPem);
    // The installer is given a name; Java resolves it through this file, as through DNS.
    const hostsFile = join(base, 'hosts');
    await writeFile(hostsFile, `127.0.0.1 ${HOST}\n`);

    const chain = { certPem: issued.chainPem, keyPem: issued.keyPem };
    const leafAlone = { certPem: issued.certPem, keyPem: issued.keyPem };
    const probes: Record<string, [Served, string]> = {
      accepted: [chain, files.ca],
      leafUnknownCa: [leafAlone, files.other],
      chainUnknownCa: [chain, files.other],
      leafStoreChain: [chain, files.leaf],
      leafStoreLeaf: [leafAlone, files.leaf],
      leafStoreSibling: [{ certPem: sibling.chainPem, keyPem: sibling.keyPem }, files.leaf],
      'wrong-host': [brokenServerCert(ca, 'wrong-host', HOST), files.ca],
      expired: [brokenServerCert(ca, 'expired', HOST), files.ca],
      'no-san': [brokenServerCert(ca, 'no-san', HOST), files.ca],
    };
    const names = Object.keys(probes);
    const servers = await Promise.all(names.map((n) => startNginx({ root: depot, ...probes[n]![0], auth: { user: 'u', password: 'p' } })));
    const java = startJavaProbes({ hostsFile, user: 'u', password: 'p' });
    try {
      for (const [i, n] of names.entries()) out[n] = await java.probe({ trust: probes[n]![1], url: `https://${HOST}:${servers[i]!.port}` });
    } finally {
      await java.stop();
      await Promise.all(servers.map((s) => s.stop()));
    }
  });
  afterAll(() => cleanup?.());

  it('accepts a depotkit server certificate: HEAD then GET of the catalog succeed', () => {
    expect(out.accepted).toMatch(/^HEAD 200 \d+\nGET 200 \d+\n$/);
    const [head, get] = out
      .accepted!.trim()
      .split('\n')
      .map((l) => l.split(' ')[2]);
    expect(head).toBe(get); // HEAD's Content-Length is the body's length
  });

  it('rejects the same certificate when its CA is not in the store ("unable to find valid certification path")', () => {
    expect(out.leafUnknownCa).toContain('unable to find valid certification path');
    expect(out.chainUnknownCa).toMatch(/PKIX path (building|validation) failed/);
  });

  it("accepts a server whose own leaf is the store's only certificate: Java's PKIX takes any trusted certificate as an anchor, CA or not", () => {
    // Served with its chain and alone: either way the path ends at the trusted leaf.
    expect(out.leafStoreChain).toMatch(/^HEAD 200 \d+\nGET 200/);
    expect(out.leafStoreLeaf).toMatch(/^HEAD 200 \d+\nGET 200/);
    // Another leaf of the same CA is not trusted by it.
    expect(out.leafStoreSibling).toMatch(/PKIX path (building|validation) failed/);
  });

  it.each([
    ['wrong-host', /No subject alternative DNS name matching depot\.test/],
    ['expired', /validity check failed|NotAfter|expired/i],
  ] as const)('rejects a %s certificate as the installer does', (kind, message) => {
    expect(out[kind]).toMatch(message);
  });

  it('falls back to the CN when there is no SAN at all: why depotkit itself insists on a SAN', () => {
    // Plain Java accepts it; the installer's stricter policy (and browsers, and the
    // field reports) do not, so `depotkit check` reports cert.san.missing itself.
    expect(out['no-san']).toMatch(/^HEAD 200/);
  });
});
