import forge from 'node-forge';
import { beforeAll, describe, expect, it } from 'vitest';
import { issuerPath, issueServerCert, lintServerCertificate, pathToRoot, readCertificate } from '../../src/cert/index.js';
import { forgeCa, type ForgeCa } from '../vcenter/helpers.js';

const HOST = 'depot.lab.local';

/** `ca`'s subject and key, certified again by `issuer` (a cross-signed CA): two CAs of one subject and one key. */
function crossSign(ca: ForgeCa, issuer: ForgeCa): string {
  const original = forge.pki.certificateFromPem(ca.certPem);
  const issuerCert = forge.pki.certificateFromPem(issuer.certPem);
  const cert = forge.pki.createCertificate();
  cert.serialNumber = '0badc0ffee';
  cert.publicKey = original.publicKey;
  cert.validity.notBefore = original.validity.notBefore;
  cert.validity.notAfter = original.validity.notAfter;
  cert.setSubject(original.subject.attributes);
  cert.setIssuer(issuerCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: issuerCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(issuer.keyPem), forge.md.sha256.create());
  return forge.pki.certificateToPem(cert).replace(/\r\n/g, '\n');
}

describe('the chain builder', () => {
  // Two intermediates of one subject and key: the first is certified by a root nobody trusts, the second by the trusted one.
  let untrustedRoot: ForgeCa;
  let trustedRoot: ForgeCa;
  let wrongFirst: string;
  let rightSecond: string;
  let leaf: { certPem: string };
  beforeAll(async () => {
    untrustedRoot = forgeCa('Lab Root');
    trustedRoot = forgeCa('Lab Root');
    const intermediate = forgeCa('Lab Intermediate', untrustedRoot);
    wrongFirst = intermediate.certPem;
    rightSecond = crossSign(intermediate, trustedRoot);
    leaf = await issueServerCert(intermediate, { dns: [HOST], keySize: 2048 });
  });

  it('tries the next CA of the same subject when the first one leads nowhere', () => {
    const read = (pem: string) => readCertificate(pem);
    const anchor = read(trustedRoot.certPem);
    const isAnchor = (c: { der: Buffer }) => c.der.equals(anchor.der);
    const path = issuerPath(read(leaf.certPem), [read(wrongFirst), read(rightSecond), anchor], isAnchor);
    expect(path?.map((c) => c.der.equals(read(rightSecond).der) || isAnchor(c))).toEqual([true, true]);
    // The same pool without the trusted root: no path.
    expect(issuerPath(read(leaf.certPem), [read(wrongFirst), read(rightSecond)], isAnchor)).toBeUndefined();
  });

  it('lets the lint trust a leaf whose server sends both intermediates, the wrong one first', () => {
    const findings = lintServerCertificate(leaf.certPem + wrongFirst + rightSecond, { host: HOST, caPems: [trustedRoot.certPem] });
    expect(findings.filter((f) => f.id.startsWith('cert.chain.')).map((f) => f.id)).toEqual([]);
    // Only the intermediate of the root nobody trusts: untrusted, as before.
    expect(lintServerCertificate(leaf.certPem + wrongFirst, { host: HOST, caPems: [trustedRoot.certPem] }).map((f) => f.id)).toContain('cert.chain.untrusted');
  });

  it('lets the management flow find the root through the second intermediate', () => {
    const pool = [wrongFirst, rightSecond, trustedRoot.certPem].map((p) => readCertificate(p));
    expect(pathToRoot(readCertificate(leaf.certPem), pool)).toHaveLength(2);
    expect(pathToRoot(readCertificate(leaf.certPem), pool.slice(0, 2))).toBeUndefined();
  });
});
