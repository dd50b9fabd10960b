import { X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCa, issueServerCert, sha256Fingerprint, type CaMaterial, type ServerMaterial } from '../../src/cert/index.js';
import { daysLeft, readCertificate, readCertificates } from '../../src/cert/certificate-reader.js';

describe('the certificate reader (node:crypto only)', () => {
  let ca: CaMaterial;
  let server: ServerMaterial;

  beforeAll(async () => {
    ca = await createCa({ cn: 'Reader Lab CA', days: 30, keySize: 2048 });
    server = await issueServerCert(ca, { dns: ['depot.lab.local', 'localhost'], ips: ['10.0.0.5'], days: 10, keySize: 2048 });
  });

  it('reads subject, issuer, SANs, validity, fingerprints and whether it is a CA', () => {
    const leaf = readCertificate(server.certPem);
    expect(leaf.commonName).toBe('depot.lab.local');
    expect(leaf.subject).toContain('CN=depot.lab.local');
    expect(leaf.issuer).toContain('CN=Reader Lab CA');
    expect(leaf.dns).toEqual(['depot.lab.local', 'localhost']);
    expect(leaf.ips).toEqual(['10.0.0.5']);
    const x509 = new X509Certificate(server.certPem);
    expect(leaf.notBefore).toEqual(new Date(x509.validFrom));
    expect(leaf.notAfter).toEqual(new Date(x509.validTo));
    expect(leaf.sha256).toBe(x509.fingerprint256);
    expect(leaf.sha256Hex).toBe(sha256Fingerprint(server.certPem));
    expect(leaf).toMatchObject({ isCa: false, selfSigned: false });
    expect(leaf.pem).toBe(server.certPem);
    expect(daysLeft(leaf, leaf.notAfter)).toBe(0);
    expect(daysLeft(leaf, new Date(leaf.notAfter.getTime() - 3 * 86_400_000 - 1))).toBe(3);
    expect(daysLeft(leaf, new Date(leaf.notAfter.getTime() + 1))).toBe(-1);

    const root = readCertificate(ca.certPem);
    expect(root).toMatchObject({ isCa: true, selfSigned: true, commonName: 'Reader Lab CA', dns: [], ips: [] });
  });

  it('reads a chain in order and never throws on what it cannot read', () => {
    expect(readCertificates(server.chainPem).map((c) => c?.commonName)).toEqual(['depot.lab.local', 'Reader Lab CA']);
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
  });
});
