import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { createCa, issueServerCert, type CaMaterial } from '../../src/cert/index.js';
import { brokenServerCert } from '../helpers/certs.js';
import { REPO_ROOT, tempDir } from '../helpers/temp.js';
import { NGINX, startNginx } from '../helpers/nginx.js';

const run = promisify(execFile);
const HOST = 'depot.test';
const JAVA = await run('java', ['-version']).then(
  () => true,
  () => false,
);

let base: string;
let cleanup: () => Promise<void>;
let depot: string;
let ca: CaMaterial;
let caFile: string;
let hostsFile: string;

beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir());
  depot = join(base, 'depot');
  await makeDemoDepot(depot, { binarySize: 16 });
  ca = await createCa({ keySize: 2048 });
  caFile = join(base, 'ca.pem');
  await writeFile(caFile, ca.certPem);
  // The installer is given a name; Java resolves it through this file, as through DNS.
  hostsFile = join(base, 'hosts');
  await writeFile(hostsFile, `127.0.0.1 ${HOST}\n`);
});
afterAll(() => cleanup());

/** Serves the depot with `cert` and asks Java's TLS stack, as the installer would. */
async function javaProbe(cert: { certPem: string; keyPem: string }, trust = caFile): Promise<string> {
  const server = await startNginx({ root: depot, ...cert, auth: { user: 'u', password: 'p' } });
  try {
    const { stdout } = await run('java', [
      `-Djdk.net.hosts.file=${hostsFile}`,
      join(REPO_ROOT, 'test/interop/DepotProbe.java'),
      trust,
      `https://${HOST}:${server.port}`,
      'u',
      'p',
    ]).catch((err) => err as { stdout: string });
    return stdout;
  } finally {
    await server.stop();
  }
}

describe.skipIf(!JAVA || !NGINX)("Java's TLS stack, as the installer (strict host names, its own trust store)", () => {
  it('accepts a depotkit server certificate: HEAD then GET of the catalog succeed', async () => {
    const issued = await issueServerCert(ca, { dns: [HOST], keySize: 2048 });
    const out = await javaProbe({ certPem: issued.chainPem, keyPem: issued.keyPem });
    expect(out).toMatch(/^HEAD 200 \d+\nGET 200 \d+\n$/);
    const [head, get] = out
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[2]);
    expect(head).toBe(get); // HEAD's Content-Length is the body's length
  });

  it('rejects the same certificate when its CA is not in the store ("unable to find valid certification path")', async () => {
    const issued = await issueServerCert(ca, { dns: [HOST], keySize: 2048 });
    const other = await createCa({ keySize: 2048, cn: 'Another private CA' });
    const otherFile = join(base, 'other-ca.pem');
    await writeFile(otherFile, other.certPem);
    expect(await javaProbe({ certPem: issued.certPem, keyPem: issued.keyPem }, otherFile)).toContain('unable to find valid certification path');
    expect(await javaProbe({ certPem: issued.chainPem, keyPem: issued.keyPem }, otherFile)).toMatch(/PKIX path (building|validation) failed/);
  });

  it("accepts a server whose own leaf is the store's only certificate: Java's PKIX takes any trusted certificate as an anchor, CA or not", async () => {
    const issued = await issueServerCert(ca, { dns: [HOST], keySize: 2048 });
    const leafFile = join(base, 'leaf-only.pem');
    await writeFile(leafFile, issued.certPem);
    // Served with its chain and alone: either way the path ends at the trusted leaf.
    expect(await javaProbe({ certPem: issued.chainPem, keyPem: issued.keyPem }, leafFile)).toMatch(/^HEAD 200 \d+\nGET 200/);
    expect(await javaProbe({ certPem: issued.certPem, keyPem: issued.keyPem }, leafFile)).toMatch(/^HEAD 200 \d+\nGET 200/);
    // Another leaf of the same CA is not trusted by it.
    const sibling = await issueServerCert(ca, { dns: [HOST], keySize: 2048 });
    expect(await javaProbe({ certPem: sibling.chainPem, keyPem: sibling.keyPem }, leafFile)).toMatch(/PKIX path (building|validation) failed/);
  });

  it.each([
    ['wrong-host', /No subject alternative DNS name matching depot\.test/],
    ['expired', /validity check failed|NotAfter|expired/i],
  ] as const)('rejects a %s certificate as the installer does', async (kind, message) => {
    expect(await javaProbe(await brokenServerCert(ca, kind, HOST))).toMatch(message);
  });

  it('falls back to the CN when there is no SAN at all: why depotkit itself insists on a SAN', async () => {
    // Plain Java accepts it; the installer's stricter policy (and browsers, and the
    // field reports) do not, so `depotkit check` reports cert.san.missing itself.
    expect(await javaProbe(await brokenServerCert(ca, 'no-san', HOST))).toMatch(/^HEAD 200/);
  });
});
