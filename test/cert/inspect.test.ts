import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCa, inspectCsr, issueServerCert, lintServerCertificate, readPemBlocks, type CaMaterial } from '../../src/cert/index.js';
import { brokenServerCert } from '../helpers/certs.js';
import { tempDir } from '../helpers/temp.js';
import { openssl, opensslCsr } from './openssl.js';
import { usageRefusal } from './refusal.js';
import { onTheCommandLine } from './words.js';

// What cert inspect reads and lints, in-process; test/cert/cli.test.ts keeps how the command shows it.
const HOST = 'depot.lab.local';
const INSPECTED = ['CERTIFICATE', 'CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST'];
let dir: string;
let cleanup: () => Promise<void>;
let ca: CaMaterial;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  ca = await createCa({ cn: 'Inspect Lab CA', keySize: 2048 });
});
afterAll(() => cleanup());

const readError = (path: string) => usageRefusal(readPemBlocks(path, INSPECTED));

describe('what cert inspect reads', () => {
  it('refuses a missing file, malformed PEM and binary DER, saying how to convert DER', async () => {
    expect((await readError(join(dir, 'missing.pem'))).message).toMatch(/missing\.pem does not exist/);
    const bad = join(dir, 'bad.pem');
    await writeFile(bad, '-----BEGIN CERTIFICATE-----\nMIIB\n');
    expect((await readError(bad)).message).toMatch(/bad\.pem is malformed: the CERTIFICATE block has no END line\./);
    const pem = join(dir, 'ca.pem');
    await writeFile(pem, ca.certPem);
    const der = join(dir, 'ca.der');
    expect(openssl(['x509', '-in', pem, '-outform', 'DER', '-out', der]).code).toBe(0);
    const derError = await readError(der);
    expect(derError.message).toMatch(/ca\.der holds no CERTIFICATE, CERTIFICATE REQUEST or NEW CERTIFICATE REQUEST PEM block\./);
    expect(derError.fix).toMatch(/^It looks like binary DER; convert it with: openssl x509 -inform DER/);
  });

  it('shows what a CSR asks for, after verifying its signature', async () => {
    const { pem } = opensslCsr(dir, 'show', '/O=Lab/CN=vc.lab.local', ['-addext', 'subjectAltName=DNS:vc.lab.local,IP:10.0.0.9'], ['-newkey', 'rsa:3072']);
    expect(inspectCsr(pem)).toEqual({
      subject: 'O=Lab, CN=vc.lab.local',
      commonName: 'vc.lab.local',
      san: { dns: ['vc.lab.local'], ips: ['10.0.0.9'] },
      key: { type: 'rsa', bits: 3072 },
      signatureAlgorithm: 'sha256WithRSAEncryption',
    });
  });
});

describe('the lint cert inspect runs', () => {
  it('names the CA folder in the fix when given one', async () => {
    const leaf = await issueServerCert(ca, { dns: [HOST, 'depot'], ips: ['10.0.0.5'] });
    const caDir = join(dir, 'ca-dir');
    const [finding] = lintServerCertificate(leaf.certPem, { host: 'other.lab.local', caPems: [ca.certPem], caDir });
    expect(finding).toMatchObject({ id: 'cert.san.host-missing', severity: 'error' });
    expect(onTheCommandLine(finding!.fix)).toBe(
      `Issue a new certificate: depotkit cert issue --ca ${caDir} --dns other.lab.local --dns depot.lab.local --dns depot --ip 10.0.0.5 --out <out-dir>`,
    );
  });

  it.each([
    ['no-san', 'cert.san.missing'],
    ['ip-cn', 'cert.cn.ip'],
    ['expired', 'cert.expired'],
    ['wrong-host', 'cert.san.host-missing'],
    ['self-signed', 'cert.chain.untrusted'],
  ] as const)("finds the test helper's %s certificate as %s, with a fix", (kind, id) => {
    const findings = lintServerCertificate(brokenServerCert(ca, kind, HOST).certPem, { host: HOST, caPems: [ca.certPem] });
    const finding = findings.find((f) => f.id === id);
    expect(finding).toMatchObject({ severity: 'error' });
    expect(finding?.fix).toBeTruthy();
  });
});
