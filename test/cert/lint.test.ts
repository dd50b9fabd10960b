import { writeFileSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCa, readCertificate, issueServerCert, lintServerCertificate, sha256Fingerprint, type CaMaterial } from '../../src/cert/index.js';
import { INSTALLER_MESSAGES } from '../../src/constants.js';
import { bareHost } from '../../src/util/url.js';
import type { Finding } from '../../src/util/findings.js';
import { brokenServerCert, customCa } from '../helpers/certs.js';
import { pooledKeyPem } from '../helpers/key-pool.js';
import { tempDir } from '../helpers/temp.js';
import { openssl, opensslCsr, opensslSign } from './openssl.js';
import { onTheCommandLine } from './words.js';

const HOST = 'depot.lab.local';
const DAY = 86_400_000;
let dir: string;
let cleanup: () => Promise<void>;
let ca: CaMaterial;
let good: { certPem: string; chainPem: string };
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  ca = await createCa({ cn: 'Lint CA', keySize: 2048 });
  good = await issueServerCert(ca, { dns: [HOST], ips: ['10.0.0.5'] });
});
afterAll(() => cleanup());

const ids = (findings: Finding[]) => findings.map((f) => f.id);
const errors = (findings: Finding[]) => findings.filter((f) => f.severity === 'error').map((f) => f.id);

/** A certificate made by openssl from a config snippet, signed by our CA. */
/** One of the suite's pooled 2048-bit keys in `name`.key: openssl signs with it instead of making its own. */
function pooledKeyFile(name: string): string {
  const path = join(dir, `${name}.key`);
  writeFileSync(path, pooledKeyPem(2048), { mode: 0o600 });
  return path;
}

/** A self-signed root made by openssl req -x509 with a pooled key (`keyPath`): its PEM. */
function pooledRoot(name: string, subject: string, extra: string[] = []): { keyPath: string; pem: string } {
  const keyPath = pooledKeyFile(name);
  const r = openssl(['req', '-x509', '-key', keyPath, '-subj', subject, '-days', '100', ...extra]);
  if (r.code !== 0) throw new Error(r.stderr);
  return { keyPath, pem: r.stdout };
}

async function opensslCert(name: string, opts: { bits?: number; ext: string; subject?: string; digest?: string }): Promise<string> {
  const caKey = join(dir, 'ca.key');
  const caCert = join(dir, 'ca.pem');
  await writeFile(caKey, ca.keyPem);
  await writeFile(caCert, ca.certPem);
  const ext = join(dir, `${name}.ext`);
  await writeFile(ext, `[v3]\n${opts.ext}\n`);
  // A pooled key unless the size is the point (openssl's own 1024-bit key is quick to make).
  const keyAlg = opts.bits === undefined ? ['-key', pooledKeyFile(name)] : ['-newkey', `rsa:${opts.bits}`];
  const { csrPath } = opensslCsr(dir, name, opts.subject ?? `/CN=${HOST}`, [], keyAlg);
  return opensslSign(csrPath, { caPath: caCert, caKeyPath: caKey }, ext, { days: 200, digest: opts.digest });
}

describe('lintServerCertificate', () => {
  it('finds nothing wrong with a certificate issued for the host, by name or by IP, chained to the CA', async () => {
    expect(lintServerCertificate(good.certPem, { host: HOST, caPems: [ca.certPem] })).toEqual([]);
    expect(lintServerCertificate(good.chainPem, { host: 'DEPOT.lab.local', caPems: [ca.certPem] })).toEqual([]);
    expect(lintServerCertificate(good.certPem, { host: '10.0.0.5', caPems: [ca.certPem] })).toEqual([]);
    const v6 = await issueServerCert(ca, { dns: [HOST], ips: ['fd00::5'] });
    expect(lintServerCertificate(v6.certPem, { host: '[FD00:0::5]' })).toEqual([]);
  });

  it('flags a missing SAN with a fix naming the exact issue command', () => {
    const bad = brokenServerCert(ca, 'no-san', HOST);
    const findings = lintServerCertificate(bad.certPem, { host: HOST, caPems: [ca.certPem], caDir: '/etc/depotkit/ca', outDir: '/etc/depotkit/depot' });
    expect(errors(findings)).toEqual(['cert.san.missing']);
    expect(onTheCommandLine(findings[0]!.fix)).toBe(
      `Issue a new certificate: depotkit cert issue --ca /etc/depotkit/ca --dns ${HOST} --out /etc/depotkit/depot`,
    );
    expect(findings[0]!.installer).toMatch(/Secure protocol communication error/);
  });

  it('flags a SAN without the host, keeping the names it had in the fix', () => {
    const bad = brokenServerCert(ca, 'wrong-host', HOST);
    const findings = lintServerCertificate(bad.certPem, { host: HOST, caPems: [ca.certPem] });
    expect(errors(findings)).toEqual(['cert.san.host-missing']);
    expect(findings[0]!.message).toBe(`The certificate's SAN (DNS:wrong-host.invalid) does not contain DNS:${HOST}, the name the installer connects to.`);
    expect(onTheCommandLine(findings[0]!.fix)).toContain(`depotkit cert issue --ca <ca-dir> --dns ${HOST} --dns wrong-host.invalid --out <out-dir>`);
    expect(ids(findings)).toContain('cert.cn.host-mismatch');
    // An IP host must be in the SAN as an IP.
    expect(errors(lintServerCertificate(good.certPem, { host: '10.0.0.6' }))).toEqual(['cert.san.host-missing']);
    expect(onTheCommandLine(lintServerCertificate(good.certPem, { host: '10.0.0.6' })[0]!.fix)).toContain('--dns depot.lab.local --ip 10.0.0.6 --ip 10.0.0.5');
  });

  it('flags a SAN without an IP the 9.1 depot service also connects by', async () => {
    expect(lintServerCertificate(good.certPem, { host: HOST, ips: ['10.0.0.5'] })).toEqual([]);
    const dnsOnly = await issueServerCert(ca, { dns: [HOST] });
    const f = lintServerCertificate(dnsOnly.certPem, { host: HOST, ips: ['10.0.0.7'], caDir: 'ca' });
    expect(errors(f)).toEqual(['cert.san.ip-missing']);
    expect(f[0]!.message).toBe("The certificate's SAN lacks IP:10.0.0.7; the 9.1 depot service needs the IP in the SAN as well as the FQDN.");
    expect(onTheCommandLine(f[0]!.fix)).toBe(`Issue a new certificate: depotkit cert issue --ca ca --dns ${HOST} --ip 10.0.0.7 --out <out-dir>`);
    expect(() => lintServerCertificate(dnsOnly.certPem, { host: HOST, ips: ['nope'] })).toThrow(/"nope" is not an IP address/);
  });

  it('flags a CN that is an IP even when the SAN is right', () => {
    const bad = brokenServerCert(ca, 'ip-cn', HOST);
    expect(errors(lintServerCertificate(bad.certPem, { host: HOST, caPems: [ca.certPem] }))).toEqual(['cert.cn.ip']);
  });

  it('flags an expired certificate, one not yet valid, and one expiring soon', async () => {
    const expired = brokenServerCert(ca, 'expired', HOST);
    const f = lintServerCertificate(expired.certPem, { host: HOST, caPems: [ca.certPem] });
    expect(errors(f)).toEqual(['cert.expired']);
    expect(f[0]!.message).toMatch(/^The certificate expired on 20\d\d-/);
    // Renewed in place, as the renewal runbook does.
    expect(onTheCommandLine(f[0]!.fix)).toMatch(/^Renew it in its server folder: depotkit cert renew <server-dir> --ca <ca-dir> --force, then reload serve/);
    const future = await issueServerCert(ca, { dns: [HOST], notBefore: new Date(Date.now() + 3 * DAY), days: 30 });
    expect(errors(lintServerCertificate(future.certPem, { host: HOST }))).toEqual(['cert.not-yet-valid']);
    const soon = await issueServerCert(ca, { dns: [HOST], days: 10 });
    expect(lintServerCertificate(soon.certPem, { host: HOST }).map((x) => [x.id, x.severity])).toEqual([['cert.expiring-soon', 'warning']]);
    expect(onTheCommandLine(lintServerCertificate(soon.certPem, { host: HOST })[0]!.fix)).toContain('depotkit cert renew <server-dir> --ca <ca-dir> --force');
    // `now` is honoured.
    expect(errors(lintServerCertificate(good.certPem, { host: HOST, now: new Date(Date.now() + 900 * DAY) }))).toEqual(['cert.expired']);
  });

  it('flags a self-signed certificate: untrusted against a CA, a warning without one', () => {
    const bad = brokenServerCert(ca, 'self-signed', HOST);
    const withCa = lintServerCertificate(bad.certPem, { host: HOST, caPems: [ca.certPem] });
    expect(errors(withCa)).toEqual(['cert.chain.untrusted']);
    expect(withCa[0]!.message).toBe(`The certificate (issued by CN=${HOST}) does not chain to the given CA (CN=Lint CA).`);
    expect(onTheCommandLine(withCa[0]!.fix)).toMatch(/TRUSTED_FOR_OUTBOUND.*depotkit cert issue --ca <ca-dir> --dns depot\.lab\.local/);
    expect(lintServerCertificate(bad.certPem, { host: HOST }).map((x) => [x.id, x.severity])).toEqual([['cert.self-signed', 'warning']]);
    // Trusting the self-signed certificate itself is a valid anchor.
    expect(lintServerCertificate(bad.certPem, { host: HOST, caPems: [bad.certPem] })).toEqual([]);
  });

  it('flags a certificate from another CA as untrusted, and one whose CA has expired', async () => {
    const other = await createCa({ cn: 'Other CA', keySize: 2048 });
    const foreign = await issueServerCert(other, { dns: [HOST] });
    expect(errors(lintServerCertificate(foreign.certPem, { host: HOST, caPems: [ca.certPem] }))).toEqual(['cert.chain.untrusted']);
    expect(lintServerCertificate(foreign.certPem, { host: HOST, caPems: [ca.certPem, other.certPem] })).toEqual([]);
    // A CA with the same name but another key does not fool the check.
    const twin = await createCa({ cn: 'Lint CA', keySize: 2048 });
    expect(errors(lintServerCertificate(good.certPem, { host: HOST, caPems: [twin.certPem] }))).toEqual(['cert.chain.untrusted']);
    const shortCa = customCa({ cn: 'Short CA', notBefore: new Date(Date.now() - 2 * DAY), notAfter: new Date(Date.now() + 2 * DAY) });
    const leaf = brokenServerCert(shortCa, 'expired', HOST);
    expect(errors(lintServerCertificate(leaf.certPem, { host: HOST, caPems: [shortCa.certPem], now: new Date(Date.now() + 3 * DAY) }))).toEqual([
      'cert.expired',
      'cert.chain.ca-expired',
    ]);
  });

  it('follows an intermediate given in chainPems or after the leaf, and enforces path lengths', async () => {
    // openssl makes a root (no path length limit) and an intermediate it signs.
    const ext = join(dir, 'inter.ext');
    await writeFile(
      ext,
      '[v3]\nbasicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n',
    );
    const { keyPath: rootKey, pem: rootPem } = pooledRoot('root', '/CN=Root');
    await writeFile(join(dir, 'root.pem'), rootPem);
    const { csrPath: interCsr, keyPath: interKey } = opensslCsr(dir, 'inter', '/CN=Intermediate', [], ['-key', pooledKeyFile('inter')]);
    const interPem = opensslSign(interCsr, { caPath: join(dir, 'root.pem'), caKeyPath: rootKey }, ext);
    const inter = { certPem: interPem, keyPem: await readFile(interKey, 'utf8') };
    const leaf = await issueServerCert(inter, { dns: [HOST] });
    expect(errors(lintServerCertificate(leaf.certPem, { host: HOST, caPems: [rootPem] }))).toEqual(['cert.chain.untrusted']);
    expect(lintServerCertificate(leaf.certPem, { host: HOST, caPems: [rootPem], chainPems: [interPem] })).toEqual([]);
    expect(lintServerCertificate(leaf.chainPem, { host: HOST, caPems: [rootPem] })).toEqual([]);
    // A root limited to pathlen 0 may not have an intermediate below it.
    const { keyPath: tightKey, pem: tightPem } = pooledRoot('tight', '/CN=Tight Root', ['-addext', 'basicConstraints=critical,CA:TRUE,pathlen:0']);
    await writeFile(join(dir, 'tight.pem'), tightPem);
    const tightInter = opensslSign(interCsr, { caPath: join(dir, 'tight.pem'), caKeyPath: tightKey }, ext);
    const leaf2 = await issueServerCert({ certPem: tightInter, keyPem: inter.keyPem }, { dns: [HOST] });
    const f = lintServerCertificate(leaf2.chainPem, { host: HOST, caPems: [tightPem] });
    expect(errors(f)).toEqual(['cert.chain.path-length']);
    expect(f[0]!.message).toBe('CN=Tight Root allows 0 CA certificate(s) below it, but the chain has 1.');
  });

  it('flags a small key, a CA certificate served as the leaf, a missing serverAuth and a missing digitalSignature', async () => {
    const small = await opensslCert('small', { bits: 1024, ext: `subjectAltName=DNS:${HOST}\nextendedKeyUsage=serverAuth` });
    const f = lintServerCertificate(small, { host: HOST, caPems: [ca.certPem] });
    expect(errors(f)).toEqual(['cert.key.too-small']);
    expect(f[0]!.message).toBe("The certificate's RSA key has 1024 bits; at least 2048 are required.");
    expect(errors(lintServerCertificate(ca.certPem, { host: 'Lint CA' }))).toContain('cert.ca-flag');
    const client = await opensslCert('client', { ext: `subjectAltName=DNS:${HOST}\nextendedKeyUsage=clientAuth` });
    const c = lintServerCertificate(client, { host: HOST, caPems: [ca.certPem] });
    expect(errors(c)).toEqual(['cert.eku.no-server-auth']);
    expect(c[0]!.message).toBe("The certificate's extended key usage (clientAuth) lacks serverAuth, so it is not for TLS servers.");
    const ku = await opensslCert('ku', { ext: `subjectAltName=DNS:${HOST}\nkeyUsage=critical,keyEncipherment` });
    expect(errors(lintServerCertificate(ku, { host: HOST, caPems: [ca.certPem] }))).toEqual(['cert.key-usage.no-digital-signature']);
  });

  it('warns about a SHA-1 signature', async () => {
    const sha1 = await opensslCert('sha1', { ext: `subjectAltName=DNS:${HOST}\nextendedKeyUsage=serverAuth`, digest: 'sha1' });
    const f = lintServerCertificate(sha1, { host: HOST, caPems: [ca.certPem] });
    expect(f.map((x) => [x.id, x.severity])).toEqual([['cert.signature.weak', 'warning']]);
    expect(f[0]!.message).toBe('The certificate is signed with sha1WithRSAEncryption; Java and browsers are dropping SHA-1.');
  });

  it('matches wildcards for exactly one label', async () => {
    const wild = await issueServerCert(ca, { dns: ['*.lab.local'] });
    expect(errors(lintServerCertificate(wild.certPem, { host: HOST }))).toEqual([]);
    expect(errors(lintServerCertificate(wild.certPem, { host: 'a.depot.lab.local' }))).toEqual(['cert.san.host-missing']);
    expect(errors(lintServerCertificate(wild.certPem, { host: 'lab.local' }))).toEqual(['cert.san.host-missing']);
  });

  it('notes a validity longer than browsers accept', async () => {
    const long = await issueServerCert(ca, { dns: [HOST], days: 1000 });
    expect(lintServerCertificate(long.certPem, { host: HOST }).map((x) => [x.id, x.severity])).toEqual([['cert.validity.too-long', 'info']]);
  });

  it('throws one sentence for something that is not a certificate', () => {
    expect(() => lintServerCertificate('junk', { host: HOST })).toThrow('The certificate holds no CERTIFICATE PEM block.');
  });

  it("quotes the installer's messages from src/constants.ts, and no pki source spells them itself", async () => {
    const bad = brokenServerCert(ca, 'self-signed', HOST);
    const [untrusted] = lintServerCertificate(bad.certPem, { host: HOST, caPems: [ca.certPem] });
    expect(untrusted!.installer).toBe(`Fails the connection: "${INSTALLER_MESSAGES.secureProtocolError}" ("${INSTALLER_MESSAGES.untrustedPath}").`);
    // The installer's words for an untrusted CA.
    expect(INSTALLER_MESSAGES.untrustedPath).toBe('unable to find valid certification path');
    const srcDir = fileURLToPath(new URL('../../src/cert/', import.meta.url));
    for (const file of await readdir(srcDir)) {
      const text = await readFile(join(srcDir, file), 'utf8');
      for (const literal of [INSTALLER_MESSAGES.secureProtocolError, INSTALLER_MESSAGES.untrustedPath]) {
        expect(text.includes(literal), `${file} spells "${literal}"`).toBe(false);
      }
    }
  });

  it('takes a bracketed IPv6 host ([fd00::1]) as the bare address, in the check and in the fix', async () => {
    expect(bareHost(' [fd00::1] ')).toBe('fd00::1');
    expect(bareHost('depot.lab.local ')).toBe('depot.lab.local');
    const v6 = await issueServerCert(ca, { dns: [HOST], ips: ['fd00::1'] });
    expect(lintServerCertificate(v6.certPem, { host: '[fd00::1]', caPems: [ca.certPem] })).toEqual([]);
    const [missing] = lintServerCertificate(v6.certPem, { host: '[fd00::2]' });
    expect(missing!.id).toBe('cert.san.host-missing');
    expect(missing!.message).toContain('does not contain IP:fd00::2,');
    expect(onTheCommandLine(missing!.fix)).toBe(
      'Issue a new certificate: depotkit cert issue --ca <ca-dir> --dns depot.lab.local --ip fd00::2 --ip fd00::1 --out <out-dir>',
    );
  });
});

describe('readCertificate and sha256Fingerprint', () => {
  it('agree with openssl on fingerprints, serial, dates and names', async () => {
    const path = join(dir, 'good.pem');
    await writeFile(path, good.certPem);
    const info = readCertificate(good.certPem);
    const fp256 = openssl(['x509', '-in', path, '-noout', '-fingerprint', '-sha256']).stdout.trim().split('=')[1];
    const fp1 = openssl(['x509', '-in', path, '-noout', '-fingerprint', '-sha1']).stdout.trim().split('=')[1];
    expect(info.fingerprints.sha256).toBe(fp256);
    expect(info.fingerprints.sha1).toBe(fp1);
    expect(sha256Fingerprint(good.certPem)).toBe(fp256);
    expect(info.serial).toBe(openssl(['x509', '-in', path, '-noout', '-serial']).stdout.trim().split('=')[1]);
    expect(info.notAfter.getTime()).toBe(new Date(openssl(['x509', '-in', path, '-noout', '-enddate']).stdout.trim().split('=')[1]!).getTime());
    expect(info).toMatchObject({
      subject: `CN=${HOST}`,
      issuer: 'CN=Lint CA',
      commonName: HOST,
      san: { dns: [HOST], ips: ['10.0.0.5'] },
      isCa: false,
      selfSigned: false,
      version: 3,
      key: { type: 'rsa', bits: 2048 },
    });
    expect(info.keyUsage).toEqual(['digitalSignature', 'keyEncipherment']);
    expect(info.extKeyUsage).toEqual(['serverAuth']);
  });

  it('reads an EC certificate too (the depot may serve one)', () => {
    const key = join(dir, 'ec.key');
    const r = openssl([
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-384',
      '-nodes',
      '-keyout',
      key,
      '-subj',
      `/CN=${HOST}`,
      '-addext',
      `subjectAltName=DNS:${HOST}`,
      '-days',
      '100',
    ]);
    const info = readCertificate(r.stdout);
    expect(info.key).toEqual({ type: 'ec', bits: 384, curve: 'secp384r1' });
    expect(info.selfSigned).toBe(true);
    // openssl req -x509 marks it CA:TRUE.
    expect(lintServerCertificate(r.stdout, { host: HOST }).map((f) => f.id)).toEqual(['cert.ca-flag', 'cert.self-signed']);
  });
});
