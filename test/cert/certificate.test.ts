import { createPrivateKey } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Certificate,
  createCa,
  daysLeft,
  findByFingerprint,
  issueServerCert,
  parsePrivateKey,
  readCertificate,
  readCertificates,
  sha256Fingerprint,
  type CaMaterial,
  type ServerMaterial,
} from '../../src/cert/index.js';
import { openssl, x509Text } from './openssl.js';

/** openssl's one-line value of a field (`-fingerprint -sha256`, `-serial`): what follows the `=`. */
function opensslField(path: string, flag: string[]): string {
  const r = openssl(['x509', '-in', path, '-noout', ...flag]);
  if (r.code !== 0) throw new Error(r.stderr);
  return r.stdout.trim().split('=').slice(1).join('=');
}

/** The SAN as `openssl x509 -text` prints it, IPv6 addresses written as people write them. */
function opensslSan(path: string): { dns: string[]; ips: string[] } {
  const text = x509Text(path).split('\n');
  const line = text[text.findIndex((l) => l.includes('X509v3 Subject Alternative Name')) + 1]!.trim();
  const entries = line.split(', ');
  const v6 = (ip: string) => (ip.includes(':') ? new URL(`http://[${ip}]/`).hostname.slice(1, -1) : ip);
  return {
    dns: entries.filter((e) => e.startsWith('DNS:')).map((e) => e.slice(4)),
    ips: entries.filter((e) => e.startsWith('IP Address:')).map((e) => v6(e.slice(11))),
  };
}

describe('the certificate reader', () => {
  let dir: string;
  let ca: CaMaterial;
  let server: ServerMaterial;
  let serverPath: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'depotkit-reader-'));
    ca = await createCa({ cn: 'Reader Lab CA', days: 30, keySize: 2048 });
    server = await issueServerCert(ca, { dns: ['depot.lab.local', 'localhost'], ips: ['10.0.0.5', 'fd00::2'], days: 10, keySize: 2048 });
    serverPath = join(dir, 'server.pem');
    await writeFile(serverPath, server.certPem);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads every fact as openssl does: names, SANs, validity, serial, fingerprints, key, usages, CA flag', () => {
    const leaf = readCertificate(server.certPem);
    expect(leaf).toMatchObject({
      subject: 'CN=depot.lab.local',
      commonName: 'depot.lab.local',
      issuer: 'CN=Reader Lab CA',
      version: 3,
      key: { type: 'rsa', bits: 2048 },
      keyUsage: ['digitalSignature', 'keyEncipherment'],
      extKeyUsage: ['serverAuth'],
      isCa: false,
      selfSigned: false,
      signatureAlgorithm: 'sha256WithRSAEncryption',
    });
    expect(leaf.san).toEqual({ dns: ['depot.lab.local', 'localhost'], ips: ['10.0.0.5', 'fd00::2'] });
    expect(leaf.san).toEqual(opensslSan(serverPath));
    expect(leaf.fingerprints.sha256).toBe(opensslField(serverPath, ['-fingerprint', '-sha256']));
    expect(leaf.fingerprints.sha1).toBe(opensslField(serverPath, ['-fingerprint', '-sha1']));
    expect(leaf.serial).toBe(opensslField(serverPath, ['-serial']));
    expect(leaf.notBefore).toEqual(new Date(opensslField(serverPath, ['-startdate'])));
    expect(leaf.notAfter).toEqual(new Date(opensslField(serverPath, ['-enddate'])));
    expect(leaf.extensions.map((e) => e.name)).toEqual(
      expect.arrayContaining(['basicConstraints', 'keyUsage', 'extKeyUsage', 'subjectKeyIdentifier', 'authorityKeyIdentifier', 'subjectAltName']),
    );
    expect(leaf.pem).toBe(server.certPem);
    expect(daysLeft(leaf, leaf.notAfter)).toBe(0);
    expect(daysLeft(leaf, new Date(leaf.notAfter.getTime() - 3 * 86_400_000 - 1))).toBe(3);
    expect(daysLeft(leaf, new Date(leaf.notAfter.getTime() + 1))).toBe(-1);

    const root = readCertificate(ca.certPem);
    expect(root).toMatchObject({ isCa: true, selfSigned: true, commonName: 'Reader Lab CA', san: { dns: [], ips: [] } });
    expect(root.keyUsage).toEqual(expect.arrayContaining(['keyCertSign', 'cRLSign']));
  });

  it('reads what openssl makes and depotkit does not: EC keys, a path length, critical flags, other SAN kinds, unknown extensions', async () => {
    const key = join(dir, 'ec.key');
    const path = join(dir, 'ec.pem');
    const r = openssl([
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', path,
      '-subj', '/O=Lab/CN=first/CN=Lab Issuing CA', '-days', '5',
      '-addext', 'basicConstraints=critical,CA:TRUE,pathlen:1',
      '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
      '-addext', 'extendedKeyUsage=clientAuth,1.3.6.1.4.1.99999.1',
      '-addext', 'subjectAltName=email:ca@lab.local,URI:https://lab.local/,DNS:ca.lab.local,IP:2001:db8:0:0:1:0:0:1',
      '-addext', '1.3.6.1.4.1.99999.2=ASN1:UTF8String:hello',
    ]); // prettier-ignore
    expect(r.code, r.stderr).toBe(0);
    const cert = readCertificate(await readFile(path, 'utf8'));
    expect(cert).toMatchObject({
      subject: 'O=Lab, CN=first, CN=Lab Issuing CA',
      commonName: 'Lab Issuing CA',
      key: { type: 'ec', bits: 256, curve: 'prime256v1' },
      isCa: true,
      pathLen: 1,
      selfSigned: true,
      keyUsage: ['digitalSignature', 'keyCertSign', 'cRLSign'],
      extKeyUsage: ['clientAuth', '1.3.6.1.4.1.99999.1'],
      signatureAlgorithm: 'ecdsa-with-SHA256',
    });
    expect(cert.san).toEqual({ dns: ['ca.lab.local'], ips: ['2001:db8::1:0:0:1'] });
    expect(cert.san).toEqual(opensslSan(path));
    expect(cert.extensions).toEqual(
      expect.arrayContaining([
        { name: 'basicConstraints', critical: true },
        { name: 'keyUsage', critical: true },
        { name: 'extKeyUsage', critical: false },
        { name: '1.3.6.1.4.1.99999.2', critical: false },
      ]),
    );
    expect(cert.fingerprints.sha256).toBe(opensslField(path, ['-fingerprint', '-sha256']));
    expect(cert.pairsWith(createPrivateKey(await readFile(key, 'utf8')))).toBe(true);
  });

  it('reads DER as it reads PEM, and answers who issued it, whose key it holds and which hosts it names', () => {
    const leaf = readCertificate(server.certPem);
    const fromDer = readCertificate(leaf.der);
    expect(fromDer.fingerprints).toEqual(leaf.fingerprints);
    expect(fromDer.pem).toBe(server.certPem);
    const root = readCertificate(ca.certPem);
    expect(root.issued(leaf)).toBe(true);
    expect(leaf.issued(root)).toBe(false);
    expect(leaf.pairsWith(parsePrivateKey(server.keyPem))).toBe(true);
    expect(leaf.pairsWith(parsePrivateKey(ca.keyPem))).toBe(false);
    expect(['depot.lab.local', 'DEPOT.lab.local.', '10.0.0.5', '[fd00::2]', 'fd00:0::2'].map((h) => leaf.coversHost(h))).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(['other.lab.local', '10.0.0.6', 'Reader Lab CA'].map((h) => leaf.coversHost(h))).toEqual([false, false, false]);
  });

  it('is `cert inspect`’s JSON: the facts, without the bytes', () => {
    const json = JSON.parse(JSON.stringify(readCertificate(server.certPem))) as Record<string, unknown>;
    expect(Object.keys(json)).toEqual([
      'subject',
      'issuer',
      'commonName',
      'san',
      'notBefore',
      'notAfter',
      'serial',
      'version',
      'fingerprints',
      'key',
      'keyUsage',
      'extKeyUsage',
      'isCa',
      'selfSigned',
      'extensions',
      'signatureAlgorithm',
    ]);
    expect(json.fingerprints).toEqual({
      sha256: expect.stringMatching(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/),
      sha1: expect.stringMatching(/^([0-9A-F]{2}:){19}[0-9A-F]{2}$/),
    });
  });

  it('spells a fingerprint one way, from the certificate read, its DER or its PEM, and finds a certificate in a list by it', () => {
    const leaf = readCertificate(server.certPem);
    const spelt = opensslField(serverPath, ['-fingerprint', '-sha256']);
    expect([sha256Fingerprint(leaf), sha256Fingerprint(leaf.der), sha256Fingerprint(server.certPem), sha256Fingerprint(server.chainPem)]).toEqual([
      spelt,
      spelt,
      spelt,
      spelt,
    ]);
    expect(() => sha256Fingerprint(server.keyPem)).toThrow('The certificate holds no CERTIFICATE PEM block.');

    const list = [
      { alias: 'broken', certificate: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' },
      { alias: 'ca', certificate: ca.certPem },
      { alias: 'none' },
      { alias: 'leaf', certificate: server.certPem },
      { alias: 'leaf again', certificate: server.certPem.replace(/\n/g, '\r\n') },
    ];
    const found = findByFingerprint(list, spelt, (e) => (e as { certificate?: string }).certificate);
    expect(found.map((e) => e.alias)).toEqual(['leaf', 'leaf again']);
    expect(findByFingerprint(list, undefined, (e) => (e as { certificate?: string }).certificate)).toEqual([]);
    expect(findByFingerprint([ca.certPem, server.certPem], sha256Fingerprint(ca.certPem))).toEqual([ca.certPem]);
  });

  it('reads a chain in order and never throws on what it cannot read', () => {
    expect(readCertificates(server.chainPem).map((c) => c?.commonName)).toEqual(['depot.lab.local', 'Reader Lab CA']);
    expect(readCertificates(server.chainPem)[0]).toBeInstanceOf(Certificate);
    // A block that is PEM but not a certificate X.509 reads keeps its place.
    const garbage = `-----BEGIN CERTIFICATE-----\n${Buffer.from('not a certificate').toString('base64')}\n-----END CERTIFICATE-----\n`;
    expect(readCertificates(garbage + ca.certPem).map((c) => c?.commonName)).toEqual([undefined, 'Reader Lab CA']);
    expect(readCertificates('no PEM here')).toEqual([]);
    expect(readCertificates(`-----BEGIN CERTIFICATE-----\nAAAA`)).toEqual([]);
  });

  it('refuses text without a readable certificate in one sentence naming its source', () => {
    expect(() => readCertificate(server.keyPem, 'server.key')).toThrow('server.key holds no CERTIFICATE PEM block.');
    const garbage = `-----BEGIN CERTIFICATE-----\n${Buffer.from('not a certificate').toString('base64')}\n-----END CERTIFICATE-----\n`;
    expect(() => readCertificate(garbage, 'cert.pem')).toThrow('cert.pem is not a readable X.509 certificate.');
    expect(() => readCertificate(Buffer.from('nope'), 'The peer')).toThrow('The peer is not a readable X.509 certificate.');
  });
});
