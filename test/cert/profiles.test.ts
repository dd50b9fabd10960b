import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CA_PROFILE,
  createCa,
  generateCsr,
  generateKeyPem,
  readCertificate,
  issueServerCert,
  KEY_USAGE_TITLES,
  LINT_RULES,
  lintServerCertificate,
  SERVER_PROFILE,
  signCsr,
  type CertificateProfile,
  type Certificate,
  type ServerProfile,
} from '../../src/cert/index.js';
import { KEY_USAGES } from '../../src/cert/profiles.js';
import { REPO_ROOT, tempDir } from '../helpers/temp.js';
import { extensionText, x509Text } from './openssl.js';
import { onTheCommandLine } from './words.js';

const HOST = 'depot.lab.local';
const DAY = 86_400_000;
const { dir, cleanup } = await tempDir();
afterAll(() => cleanup());
const ca = await createCa({ cn: 'Profile CA', keySize: 2048 });

const ids = (pem: string, profile?: ServerProfile) =>
  lintServerCertificate(pem, { host: HOST, caPems: [ca.certPem], ...(profile ? { profile } : {}) }).map((f) => f.id);
const days = (info: Certificate) => (info.notAfter.getTime() - info.notBefore.getTime()) / DAY;
/** The profile's key usages in the order a certificate holds (and readCertificate lists) them. */
const usagesOf = (profile: CertificateProfile) => KEY_USAGES.filter((u) => profile.keyUsage.usages.includes(u));
const critical = (info: Certificate, name: string) => info.extensions.find((e) => e.name === name)?.critical;

/** openssl names the key usages of `pem` (written to `name` in the folder) as `profile` titles them, in their order. */
async function expectOpensslUsages(name: string, pem: string, profile: CertificateProfile): Promise<void> {
  const path = join(dir, name);
  await writeFile(path, pem);
  expect(extensionText(x509Text(path), 'Key Usage')!.value).toBe(
    usagesOf(profile)
      .map((u) => KEY_USAGE_TITLES[u])
      .join(', '),
  );
}

/** What a certificate says about every part of a profile. */
function asIssued(info: Certificate): Record<string, unknown> {
  const has = (name: string) => info.extensions.some((e) => e.name === name);
  return {
    basicConstraints: { critical: critical(info, 'basicConstraints'), ca: info.isCa, ...(info.pathLen !== undefined ? { pathLen: info.pathLen } : {}) },
    keyUsage: { critical: critical(info, 'keyUsage'), usages: info.keyUsage },
    ...(has('extKeyUsage') ? { extKeyUsage: { critical: critical(info, 'extKeyUsage'), usages: info.extKeyUsage } } : {}),
    keyIdentifiers: { subject: has('subjectKeyIdentifier'), authority: has('authorityKeyIdentifier') },
    key: { type: info.key.type, bits: info.key.bits },
  };
}

/** The same parts as the profile states them. */
function asProfiled(profile: CertificateProfile): Record<string, unknown> {
  const bc = profile.basicConstraints;
  return {
    basicConstraints: { critical: bc.critical, ca: bc.ca, ...(bc.pathLen !== undefined ? { pathLen: bc.pathLen } : {}) },
    keyUsage: { critical: profile.keyUsage.critical, usages: usagesOf(profile) },
    ...(profile.extKeyUsage ? { extKeyUsage: { critical: profile.extKeyUsage.critical, usages: [...profile.extKeyUsage.usages] } } : {}),
    keyIdentifiers: profile.keyIdentifiers,
    key: { type: profile.key.type, bits: profile.key.bits },
  };
}

describe('the lint rule table', () => {
  const ruleIds = LINT_RULES.map((r) => r.id);

  it('lists each finding id once, and no pki source spells a finding id anywhere else', async () => {
    expect(ruleIds.length).toBeGreaterThanOrEqual(20);
    expect(new Set(ruleIds).size).toBe(ruleIds.length);
    const srcDir = join(REPO_ROOT, 'src', 'cert');
    const seen = new Map<string, string[]>();
    for (const file of (await readdir(srcDir)).filter((f) => f.endsWith('.ts'))) {
      for (const [, id] of (await readFile(join(srcDir, file), 'utf8')).matchAll(/['"`](cert\.[a-z0-9.-]+)['"`]/g))
        seen.set(id!, [...(seen.get(id!) ?? []), file]);
    }
    // Every id a pki module can report is a rule's, written there and only there.
    expect([...seen.keys()].sort()).toEqual([...ruleIds].sort());
    for (const [id, files] of seen) expect(files, id).toEqual(['lint-rules.ts']);
  });

  it('is what docs/commands/cert.md documents as the lint ids', async () => {
    const page = await readFile(join(REPO_ROOT, 'docs', 'commands', 'cert.md'), 'utf8');
    const section = /- Lint ids \(stable[^\n]*\n(?:[ ]{2}[^\n]*\n)*/.exec(page)?.[0];
    expect(section).toBeDefined();
    expect([...section!.matchAll(/`(cert\.[a-z0-9.-]+)`/g)].map((m) => m[1]).sort()).toEqual([...ruleIds].sort());
  });

  it('reports findings in the order of the table', () => {
    // A CA certificate served as a leaf, self-signed, without a SAN: several rules at once.
    const found = lintServerCertificate(ca.certPem, { host: HOST }).map((f) => f.id);
    expect(found).toEqual(ruleIds.filter((id) => found.includes(id)));
    expect(found).toEqual(expect.arrayContaining(['cert.san.missing', 'cert.ca-flag', 'cert.self-signed']));
  });
});

describe('issuing and linting read the same profiles', () => {
  it('a server certificate holds exactly the server profile, and openssl names its key usages as the profile titles them', async () => {
    const s = await issueServerCert(ca, { dns: [HOST] });
    const info = readCertificate(s.certPem);
    expect(asIssued(info)).toEqual(asProfiled(SERVER_PROFILE));
    expect(days(info)).toBe(SERVER_PROFILE.validity.days);
    expect(critical(info, 'subjectAltName')).toBe(false);
    await expectOpensslUsages('server.pem', s.certPem, SERVER_PROFILE);
    expect(ids(s.certPem)).toEqual([]);
  });

  it('a CA holds exactly the CA profile, with its default name, validity and key size', async () => {
    const own = await createCa();
    const info = readCertificate(own.certPem);
    expect(asIssued(info)).toEqual(asProfiled(CA_PROFILE));
    expect(info.commonName).toBe(CA_PROFILE.subject.commonName);
    expect(days(info)).toBe(CA_PROFILE.validity.days);
    await expectOpensslUsages('ca.pem', own.certPem, CA_PROFILE);
  });

  it('a changed copy of the server profile changes what is issued and what the lint accepts alike', async () => {
    const custom: ServerProfile = {
      ...SERVER_PROFILE,
      keyUsage: { critical: false, usages: ['digitalSignature'], tlsRequires: 'digitalSignature' },
      extKeyUsage: { critical: false, usages: ['serverAuth', 'clientAuth'], tlsRequires: 'serverAuth' },
      validity: { ...SERVER_PROFILE.validity, days: 900, maxDays: 900, csrDays: 40 },
      key: { ...SERVER_PROFILE.key, bits: 3072, minBits: { ...SERVER_PROFILE.key.minBits, rsa: 3072 } },
    };
    // The shared profiles cannot be changed in place, only copied.
    expect(() => ((SERVER_PROFILE.validity as { days: number }).days = 1)).toThrow(TypeError);
    expect(() => (SERVER_PROFILE.keyUsage.usages as string[]).push('keyCertSign')).toThrow(TypeError);
    expect(SERVER_PROFILE.validity.days).toBe(825);
    const s = await issueServerCert(ca, { dns: [HOST], profile: custom });
    const info = readCertificate(s.certPem);
    expect(asIssued(info)).toEqual(asProfiled(custom));
    expect(days(info)).toBe(900);
    // The lint holds it to the same copy: nothing to say; the stock profile finds it too long.
    expect(ids(s.certPem, custom)).toEqual([]);
    expect(ids(s.certPem)).toEqual(['cert.validity.too-long']);
    // A stock certificate: its 2048-bit key is below the copy's minimum, for the lint and for CSR signing alike.
    const stock = await issueServerCert(ca, { dns: [HOST] });
    const small = lintServerCertificate(stock.certPem, { host: HOST, profile: custom });
    expect(small.map((f) => f.id)).toEqual(['cert.key.too-small']);
    expect(small[0]!.message).toBe("The certificate's RSA key has 2048 bits; at least 3072 are required.");
    expect(onTheCommandLine(small[0]!.fix)).toMatch(/\(the new key has 3072 bits; add --key-size 4096 for more\)$/);
    const csr = generateCsr({ keyPem: await generateKeyPem(2048), commonName: HOST, dns: [HOST] });
    await expect(signCsr(ca, csr, { profile: custom })).rejects.toThrow("The CSR's RSA key has 2048 bits; the installer requires at least 3072.");
    const signed = readCertificate(await signCsr(ca, generateCsr({ keyPem: await generateKeyPem(3072), commonName: HOST, dns: [HOST] }), { profile: custom }));
    expect(asIssued(signed)).toEqual(asProfiled(custom));
    expect(days(signed)).toBe(40);
  });

  it('a changed copy of the CA profile changes the CA made', async () => {
    const custom: CertificateProfile = {
      ...CA_PROFILE,
      subject: { commonName: 'Copied profile CA' },
      basicConstraints: { critical: true, ca: true, pathLen: 1 },
      keyUsage: { critical: true, usages: ['digitalSignature', 'keyCertSign', 'cRLSign'] },
      validity: { ...CA_PROFILE.validity, days: 20 },
      key: { ...CA_PROFILE.key, bits: 2048 },
    };
    const info = readCertificate((await createCa({ profile: custom })).certPem);
    expect(asIssued(info)).toEqual(asProfiled(custom));
    expect(info.commonName).toBe('Copied profile CA');
    expect(days(info)).toBe(20);
  });

  it("the lint's thresholds are the profile's: renewal warning and longest validity", async () => {
    const s = await issueServerCert(ca, { dns: [HOST], days: 60 });
    expect(ids(s.certPem)).toEqual([]);
    const early: ServerProfile = { ...SERVER_PROFILE, validity: { ...SERVER_PROFILE.validity, renewWithinDays: 90, maxDays: 50 } };
    const found = lintServerCertificate(s.certPem, { host: HOST, caPems: [ca.certPem], profile: early });
    expect(found.map((f) => [f.id, f.severity])).toEqual([
      ['cert.expiring-soon', 'warning'],
      ['cert.validity.too-long', 'info'],
    ]);
    expect(found[0]!.message).toMatch(/, within 90 days\.$/);
    expect(found[1]!.message).toBe('The certificate is valid for 60 days; browsers refuse more than 50 (the installer does not mind).');
  });
});
