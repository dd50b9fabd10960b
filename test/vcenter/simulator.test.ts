import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MGMT_API, MGMT_HEADERS } from '../../src/constants.js';
import { handshake } from '../../src/vcenter/served.js';
import { createCa, issueServerCert, readCsr, signCsr } from '../../src/cert/index.js';
import type { MgmtSimulator } from '../../src/simulators/vcenter/index.js';
import { tempDir } from '../helpers/temp.js';
import { until } from '../helpers/poll.js';
import { PASSWORD, USER, basic, call, startSim, testCa } from './helpers.js';

const run = promisify(execFile);

async function restSession(sim: MgmtSimulator): Promise<string> {
  const res = await call(sim, 'POST', MGMT_API.rest.session, { headers: { authorization: basic(), [MGMT_HEADERS.useHeaderAuthn]: 'true' } });
  expect(res.status).toBe(200);
  return (res.body as { value: string }).value;
}

async function apiSession(sim: MgmtSimulator): Promise<string> {
  const res = await call(sim, 'POST', MGMT_API.api.session, { headers: { authorization: basic() } });
  expect(res.status).toBe(201);
  return res.body as string;
}

const sid = (id: string) => ({ [MGMT_HEADERS.sessionId]: id });

describe('management server simulator: sessions and errors', () => {
  let sim: MgmtSimulator;
  beforeAll(async () => {
    sim = await startSim({ sessionIdleMs: 400 });
  });
  afterAll(() => sim.close());

  it('opens sessions in both generations, each in its own shape', async () => {
    expect(await restSession(sim)).toMatch(/^[0-9a-f]{32}$/);
    expect(await apiSession(sim)).toMatch(/^[0-9a-f]{32}$/);
  });

  it('answers 401 in the matching error shape without a valid session or with bad credentials', async () => {
    const rest = await call(sim, 'GET', MGMT_API.rest.tls);
    expect(rest.status).toBe(401);
    expect(rest.body).toMatchObject({ type: 'com.vmware.vapi.std.errors.unauthenticated', value: { messages: [{ default_message: expect.any(String) }] } });
    const api = await call(sim, 'GET', MGMT_API.api.tls, { headers: sid('0123') });
    expect(api.status).toBe(401);
    expect(api.body).toMatchObject({ error_type: 'UNAUTHENTICATED', messages: [{ id: expect.any(String), default_message: expect.any(String), args: [] }] });
    const wrong = await call(sim, 'POST', MGMT_API.api.session, { headers: { authorization: basic(USER, 'wrong') } });
    expect(wrong.status).toBe(401);
    const noCredentials = await call(sim, 'POST', MGMT_API.rest.session, { headers: { [MGMT_HEADERS.useHeaderAuthn]: 'true' } });
    expect(noCredentials.status).toBe(401);
  });

  it('expires an idle session', async () => {
    const id = await apiSession(sim);
    expect((await call(sim, 'GET', MGMT_API.api.tls, { headers: sid(id) })).status).toBe(200);
    // Waits for the idle lifetime to pass; live() reads the store without using a session.
    await until(() => sim.liveSessions() === 0, 'the idle session to expire');
    const expired = await call(sim, 'GET', MGMT_API.api.tls, { headers: sid(id) });
    expect(expired.status).toBe(401);
    expect(JSON.stringify(expired.body)).toMatch(/expired/);
  });

  it('interoperates with curl (Basic credentials and the header)', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const caFile = join(dir, 'sim.pem');
      await writeFile(caFile, sim.currentCertPem());
      const { stdout } = await run('curl', [
        '-sS',
        '--cacert',
        caFile,
        '-u',
        `${USER}:${PASSWORD}`,
        '-H',
        `${MGMT_HEADERS.useHeaderAuthn}: true`,
        '-X',
        'POST',
        `${sim.url}${MGMT_API.rest.session}`,
      ]);
      expect(JSON.parse(stdout).value).toMatch(/^[0-9a-f]{32}$/);
    } finally {
      await cleanup();
    }
  });

  it('reports the served certificate in GET .../tls', async () => {
    const res = await call(sim, 'GET', MGMT_API.rest.tls, { headers: sid(await restSession(sim)) });
    const value = (res.body as { value: Record<string, unknown> }).value;
    const x509 = new X509Certificate(sim.currentCertPem());
    expect(value).toMatchObject({
      subject_dn: 'CN=127.0.0.1',
      issuer_dn: 'CN=127.0.0.1',
      subject_alternative_name: ['127.0.0.1'],
      thumbprint: x509.fingerprint,
    });
    expect(new Date(value.valid_to as string).getTime()).toBe(new Date(x509.validTo).getTime());
    // The initial certificate is self-signed.
    expect(x509.verify(x509.publicKey)).toBe(true);
  });
});

describe('management server simulator: CSR', () => {
  let sim: MgmtSimulator;
  beforeAll(async () => {
    sim = await startSim({ hostname: 'vc.lab.local' });
  });
  afterAll(() => sim.close());

  it('/rest takes the spec wrapper and returns a real PKCS#10 request', async () => {
    const spec = {
      common_name: 'vc.lab.local',
      organization: 'Lab',
      organization_unit: '',
      country: 'DE',
      key_size: 2048,
      subject_alt_name: ['vc.lab.local', '10.0.0.5'],
    };
    const res = await call(sim, 'POST', MGMT_API.rest.tlsCsr, { headers: sid(await restSession(sim)), body: { spec } });
    expect(res.status).toBe(200);
    const csr = (res.body as { value: { csr: string } }).value.csr;
    const { csr: parsed, names } = readCsr(csr);
    expect(names).toEqual({ dns: ['vc.lab.local'], ips: ['10.0.0.5'] });
    expect((parsed.publicKey as unknown as { n: { bitLength(): number } }).n.bitLength()).toBe(2048);
    const { dir, cleanup } = await tempDir();
    try {
      await writeFile(join(dir, 'x.csr'), csr);
      const { stderr, stdout } = await run('openssl', ['req', '-in', join(dir, 'x.csr'), '-noout', '-verify', '-subject']);
      expect(`${stdout}${stderr}`).toMatch(/verify OK/i);
      expect(stdout).toMatch(/C\s*=\s*DE, O\s*=\s*Lab, CN\s*=\s*vc\.lab\.local/);
    } finally {
      await cleanup();
    }
  });

  it('/api takes the spec unwrapped, defaults CN/SAN to the server name and the key to 3072 bits', async () => {
    const res = await call(sim, 'POST', MGMT_API.api.tlsCsr, { headers: sid(await apiSession(sim)), body: {} });
    expect(res.status).toBe(201);
    const { csr, names } = readCsr((res.body as { csr: string }).csr);
    expect(names.dns).toEqual(['vc.lab.local']);
    expect((csr.publicKey as unknown as { n: { bitLength(): number } }).n.bitLength()).toBe(3072);
  });

  it('refuses a missing wrapper on /rest, a bad key size and a body that is not an object', async () => {
    const rest = await call(sim, 'POST', MGMT_API.rest.tlsCsr, { headers: sid(await restSession(sim)), body: { key_size: 2048 } });
    expect(rest.status).toBe(400);
    expect(rest.body).toMatchObject({ type: 'com.vmware.vapi.std.errors.invalid_argument' });
    const size = await call(sim, 'POST', MGMT_API.api.tlsCsr, { headers: sid(await apiSession(sim)), body: { key_size: 1024 } });
    expect(size.status).toBe(400);
    expect(size.body).toMatchObject({ error_type: 'INVALID_ARGUMENT', messages: [{ default_message: expect.stringMatching(/2048, 3072, 4096/) }] });
    const country = await call(sim, 'POST', MGMT_API.api.tlsCsr, { headers: sid(await apiSession(sim)), body: { key_size: 2048, country: 'Germany' } });
    expect(country.status).toBe(400);
    expect(JSON.stringify(country.body)).toContain('two-letter code');
    const text = await call(sim, 'POST', MGMT_API.api.tlsCsr, { headers: sid(await apiSession(sim)), body: 'common_name' });
    expect(text.status).toBe(400);
  });
});

describe('management server simulator: replace and restart', () => {
  let sim: MgmtSimulator;
  let session: string;
  let csrCert: string;
  beforeAll(async () => {
    sim = await startSim({ restartMs: 800 });
    session = await apiSession(sim);
    const res = await call(sim, 'POST', MGMT_API.api.tlsCsr, { headers: sid(session), body: { key_size: 2048 } });
    csrCert = await signCsr(await testCa(), (res.body as { csr: string }).csr, { allowIpOnly: true });
  });
  afterAll(() => sim.close());

  const put = (body: unknown) => call(sim, 'PUT', MGMT_API.api.tls, { headers: sid(session), body });
  const refusal = (res: { status: number; body: unknown }) => {
    expect(res.status).toBe(400);
    return (res.body as { messages: Array<{ default_message: string }> }).messages[0]!.default_message;
  };

  it('refuses CRLF line endings', async () => {
    const ca = await testCa();
    expect(refusal(await put({ cert: csrCert.replace(/\n/g, '\r\n'), root_cert: ca.certPem }))).toMatch(/CRLF/);
  });

  it('refuses a certificate for another key when no key is sent, and a key that does not match', async () => {
    const other = await issueServerCert(await testCa(), { dns: ['localhost'], ips: ['127.0.0.1'] });
    expect(refusal(await put({ cert: other.certPem, root_cert: (await testCa()).certPem }))).toMatch(/private key of the last CSR/);
    const stray = await issueServerCert(await testCa(), { dns: ['localhost'], ips: ['127.0.0.1'] });
    expect(refusal(await put({ cert: other.certPem, key: stray.keyPem, root_cert: (await testCa()).certPem }))).toMatch(/does not match the certificate/);
  });

  it('refuses a root that is not self-signed, or that did not issue the chain', async () => {
    expect(refusal(await put({ cert: csrCert, root_cert: csrCert }))).toMatch(/trustAnchors parameter must be non-empty/);
    const otherCa = await createCa({ cn: 'another CA', keySize: 2048 });
    expect(refusal(await put({ cert: csrCert, root_cert: otherCa.certPem }))).toMatch(/does not verify.*trustAnchors/);
    expect(refusal(await put({ cert: csrCert }))).toMatch(/trustAnchors/);
  });

  it('refuses the current certificate', async () => {
    expect(refusal(await put({ cert: sim.currentCertPem(), root_cert: sim.currentCertPem() }))).toMatch(/same as the current/);
  });

  it('replaces, stops listening for the restart, then serves the new certificate on the same port', async () => {
    const oldPem = sim.currentCertPem();
    const res = await put({ cert: csrCert, root_cert: (await testCa()).certPem });
    expect(res.status).toBe(204);
    expect(sim.currentCertPem()).toBe(csrCert);
    // The restart window: the port is seen closed before the simulator listens again.
    const down = async () => {
      const shake = await handshake(new URL(sim.url));
      return !shake.ok && shake.reason === 'not listening';
    };
    await until(down, 'the port closed while the simulator restarts', { everyMs: 10 });
    await sim.ready();
    const shake = await handshake(new URL(sim.url), { caPems: [(await testCa()).certPem] });
    expect(shake.ok && shake.certPem).toBe(new X509Certificate(csrCert).toString());
    expect(shake.ok && shake.authorized).toBe(true);
    expect(shake.ok && shake.identityError).toBeUndefined();
    expect(sim.restarts()).toBe(1);
    // The restart dropped every session.
    expect((await call(sim, 'GET', MGMT_API.api.tls, { headers: sid(session), trust: (await testCa()).certPem })).status).toBe(401);
    expect(oldPem).not.toBe(csrCert);
  });
});
