/**
 * vCenter's trusted root chains on `sim vcenter`, with raw requests shaped as the vSphere Automation
 * SDK for Ruby sends them over /rest (its bindings' TrustedRootChains: `{"spec": {"cert_chain":
 * {"cert_chain": [PEM...]}, "chain": id}}`, answers in `{"value": ...}`) and as the /api generation
 * takes them unwrapped. Its TLS spec has no root_cert: a certificate from a private CA is installed
 * after the CA is trusted, and refused while it is not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MGMT_API, MGMT_HEADERS } from '../../src/constants.js';
import { createCa, signCsr } from '../../src/cert/index.js';
import type { MgmtSimulator } from '../../src/simulators/vcenter/index.js';
import { basic, call, startSim, testCa } from '../vcenter/helpers.js';

let sim: MgmtSimulator;
beforeAll(async () => {
  sim = await startSim({ hostname: 'localhost' });
});
afterAll(async () => {
  await sim?.close();
});

async function restSession(): Promise<Record<string, string>> {
  const reply = await call(sim, 'POST', MGMT_API.rest.session, { headers: { authorization: basic() } });
  return { [MGMT_HEADERS.sessionId]: (reply.body as { value: string }).value };
}

describe('trusted root chains', () => {
  it('on /rest: created wrapped in spec, listed, read and deleted in value; an unknown id is NOT_FOUND, a second create ALREADY_EXISTS', async () => {
    const headers = await restSession();
    const path = MGMT_API.rest.trustedRootChains;
    const ca = await testCa();
    const created = await call(sim, 'POST', path, { headers, body: { spec: { cert_chain: { cert_chain: [ca.certPem] }, chain: 'ruby-ca' } } });
    expect(created).toEqual({ status: 200, body: { value: 'ruby-ca' } });
    const again = await call(sim, 'POST', path, { headers, body: { spec: { cert_chain: { cert_chain: [ca.certPem] }, chain: 'ruby-ca' } } });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ type: 'com.vmware.vapi.std.errors.already_exists' });
    const listed = (await call(sim, 'GET', path, { headers })).body as { value: Array<{ chain: string }> };
    // The server's own first certificate is a chain too, as on a fresh install.
    expect(listed.value.map((c) => c.chain)).toContain('ruby-ca');
    expect(listed.value.length).toBe(2);
    const got = await call(sim, 'GET', `${path}/ruby-ca`, { headers });
    expect((got.body as { value: { cert_chain: { cert_chain: string[] } } }).value.cert_chain.cert_chain[0]!.trim()).toBe(ca.certPem.trim());
    expect((await call(sim, 'DELETE', `${path}/ruby-ca`, { headers })).status).toBe(200);
    const gone = await call(sim, 'GET', `${path}/ruby-ca`, { headers });
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ type: 'com.vmware.vapi.std.errors.not_found' });
    const bad = await call(sim, 'POST', path, { headers, body: { spec: { cert_chain: { cert_chain: ['not a certificate'] } } } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ type: 'com.vmware.vapi.std.errors.invalid_argument' });
  });

  it('on /api: a generated id when none is given (201), 204 on delete', async () => {
    const login = await call(sim, 'POST', MGMT_API.api.session, { headers: { authorization: basic() } });
    const headers = { [MGMT_HEADERS.sessionId]: login.body as string };
    const other = await createCa({ cn: 'another CA', keySize: 2048 });
    const created = await call(sim, 'POST', MGMT_API.api.trustedRootChains, { headers, body: { cert_chain: { cert_chain: [other.certPem] } } });
    expect(created.status).toBe(201);
    expect(created.body).toMatch(/^[0-9a-f]{40}$/);
    expect((await call(sim, 'GET', MGMT_API.api.trustedRootChains, { headers })).body).toContainEqual({ chain: created.body });
    expect((await call(sim, 'DELETE', `${MGMT_API.api.trustedRootChains}/${String(created.body)}`, { headers })).status).toBe(204);
    expect((await call(sim, 'GET', MGMT_API.api.trustedRootChains, { headers })).body).not.toContainEqual({ chain: created.body });
  });

  it('let a certificate from a trusted CA replace the served one without root_cert; untrusted, it is refused as the server refuses a chain without an anchor', async () => {
    const headers = await restSession();
    const ca = await testCa();
    const csr = async () =>
      (
        (await call(sim, 'POST', MGMT_API.rest.tlsCsr, { headers, body: { spec: { common_name: 'localhost', subject_alt_name: ['localhost', '127.0.0.1'] } } }))
          .body as { value: { csr: string } }
      ).value.csr;
    const untrusted = await signCsr(ca, await csr(), { days: 365, allowIpOnly: true });
    const refused = await call(sim, 'PUT', MGMT_API.rest.tls, { headers, body: { spec: { cert: untrusted } } });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toMatch(/trustAnchors parameter must be non-empty/);

    await call(sim, 'POST', MGMT_API.rest.trustedRootChains, { headers, body: { spec: { cert_chain: { cert_chain: [ca.certPem] } } } });
    const replaced = await call(sim, 'PUT', MGMT_API.rest.tls, { headers, body: { spec: { cert: untrusted } } });
    expect(replaced.status).toBe(200);
    await sim.ready();
    expect(sim.restarts()).toBe(1);
  }, 60_000);
});
