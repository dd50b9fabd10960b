import { beforeAll, describe, expect, it } from 'vitest';
import {
  createCa,
  generateCsr,
  generateKeyPem,
  inspectCsr,
  inspectionLines,
  issueServerCert,
  lintServerCertificate,
  readCertificate,
  requestLines,
  type CaMaterial,
  type ServerMaterial,
} from '../../src/cert/index.js';

let ca: CaMaterial;
let server: ServerMaterial;

beforeAll(async () => {
  ca = await createCa({ cn: 'Inspect Lines CA' });
  server = await issueServerCert(ca, { dns: ['depot.lab.local'], ips: ['127.0.0.1'] });
});

describe("cert inspect's layout, from the library alone", () => {
  it("lays out a certificate and its chain, a line per fact, the chain's certificates after a blank line each", () => {
    const leaf = readCertificate(server.certPem);
    const issuer = readCertificate(ca.certPem);
    const lines = inspectionLines([leaf, issuer]);
    expect(lines.slice(0, 11)).toEqual([
      'Subject:      CN=depot.lab.local',
      'Issuer:       CN=Inspect Lines CA',
      'SAN:          DNS:depot.lab.local, IP:127.0.0.1',
      `Valid:        ${leaf.notBefore.toISOString()} to ${leaf.notAfter.toISOString()}`,
      `Serial:       ${leaf.serial}`,
      'Key:          RSA 2048 bits',
      `Key usage:    ${leaf.keyUsage.join(', ')}`,
      'Ext. usage:   serverAuth',
      'CA:           no',
      `SHA-256:      ${leaf.fingerprints.sha256}`,
      `SHA-1:        ${leaf.fingerprints.sha1}`,
    ]);
    expect(lines.slice(11, 16)).toEqual([
      '',
      'Chain certificate 1:',
      'Subject:      CN=Inspect Lines CA',
      'Issuer:       CN=Inspect Lines CA (self-signed)',
      'SAN:          (none)',
    ]);
    expect(lines).toContain(`CA:           yes${issuer.pathLen !== undefined ? `, path length ${issuer.pathLen}` : ''}`);
    expect(lines).toHaveLength(24);
  });

  it("ends with the lint's count and its findings when it was linted, and nothing of the lint otherwise", () => {
    const leaf = readCertificate(server.certPem);
    const clean = lintServerCertificate(server.chainPem, { host: 'depot.lab.local', caPems: [ca.certPem] });
    expect(inspectionLines([leaf], clean, 'depot.lab.local').slice(11)).toEqual(['', 'Lint: no problems for depot.lab.local.']);
    const findings = lintServerCertificate(server.chainPem, { host: 'other.lab.local', caPems: [ca.certPem] });
    const lines = inspectionLines([leaf], findings, 'other.lab.local');
    expect(lines[12]).toMatch(/^Lint: [1-9]\d* errors?, \d+ warnings?, \d+ notes?\.$/);
    expect(lines.slice(13).some((l) => /^ERROR \S+: /.test(l))).toBe(true);
    expect(inspectionLines([leaf])).toHaveLength(11);
  });

  it("lays out a request, naming by the library's name the option a request without names needs", async () => {
    const keyPem = await generateKeyPem(2048);
    const csr = inspectCsr(generateCsr({ keyPem, commonName: 'no-names' }));
    expect(requestLines(csr)).toEqual([
      'Request:      CN=no-names',
      'SAN:          (none: sign-csr needs `allowNoSan`)',
      'Key:          RSA 2048 bits',
      `Signature:    ${csr.signatureAlgorithm}, verified`,
    ]);
    const named = inspectCsr(generateCsr({ keyPem, commonName: 'depot', dns: ['depot.lab.local'], ips: ['10.0.0.5'] }));
    expect(requestLines(named)[1]).toBe('SAN:          DNS:depot.lab.local, IP:10.0.0.5');
  });
});
