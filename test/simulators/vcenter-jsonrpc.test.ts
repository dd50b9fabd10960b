/**
 * `sim vcenter` spoken to in vAPI JSON-RPC, the only transport of the vSphere Automation SDK for
 * Python, with raw requests shaped as its runtime sends them (vmware-vapi-runtime: the JSON-RPC
 * serializer's envelope `{"jsonrpc": "2.0", "method": "invoke", "params": {"serviceId",
 * "operationId", "input": {"STRUCTURE": {"operation-input": {...}}}, "ctx": {"appCtx",
 * "securityCtx"}}, "id"}`; optional fields as `{"OPTIONAL": ...}`, secrets as `{"SECRET": ...}`),
 * and read as its bindings read the answers (com.vmware.vcenter.certificate_management.vcenter_client,
 * com.vmware.vapi.std.errors_client), not through depotkit's client.
 */
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signCsr } from '../../src/cert/index.js';
import type { MgmtSimulator } from '../../src/simulators/vcenter/index.js';
import { until } from '../helpers/poll.js';
import { PASSWORD, USER, call, startSim, testCa } from '../vcenter/helpers.js';

const SESSION = 'com.vmware.cis.session';
const TLS = 'com.vmware.vcenter.certificate_management.vcenter.tls';
const CSR = 'com.vmware.vcenter.certificate_management.vcenter.tls_csr';
const CHAINS = 'com.vmware.vcenter.certificate_management.vcenter.trusted_root_chains';

type Ctx = Record<string, unknown>;
const userPass = (user = USER, password = PASSWORD): Ctx => ({ schemeId: 'com.vmware.vapi.std.security.user_pass', userName: user, password });
const sessionCtx = (sessionId: string): Ctx => ({ schemeId: 'com.vmware.vapi.std.security.session_id', sessionId });
const input = (fields: Record<string, unknown> = {}) => ({ STRUCTURE: { 'operation-input': fields } });

let next = 0;
/** The CA to trust the simulator with once it serves a certificate the CA signed (its own before). */
let trust: string | undefined;
/** One call as the runtime's JsonClientConnector posts it. */
async function invoke(sim: MgmtSimulator, serviceId: string, operationId: string, securityCtx: Ctx | undefined, fields: Record<string, unknown> = {}) {
  const id = String(++next);
  const ctx = { appCtx: { opId: `op-${id}` }, ...(securityCtx ? { securityCtx } : {}) };
  const reply = await call(sim, 'POST', '/api', {
    trust,
    body: { jsonrpc: '2.0', method: 'invoke', params: { serviceId, operationId, input: input(fields), ctx }, id },
  });
  expect(reply.status).toBe(200);
  const body = reply.body as { jsonrpc: string; id: string; result?: { output?: unknown; error?: Record<string, Record<string, Record<string, unknown>>> } };
  expect(body.jsonrpc).toBe('2.0');
  expect(body.id).toBe(id);
  return body.result!;
}

/** The std error the bindings raise: its structure name and its fields, messages read as LocalizableMessage. */
function stdError(result: { error?: Record<string, Record<string, Record<string, unknown>>> }) {
  const [name, fields] = Object.entries(result.error!.ERROR!)[0]!;
  const messages = (fields.messages as Array<{ STRUCTURE: Record<string, { id: string; default_message: string; args: string[] }> }>).map(
    (m) => m.STRUCTURE['com.vmware.vapi.std.localizable_message']!,
  );
  return { name, fields, messages };
}

const fieldsOf = (value: unknown, structure: string) => (value as { STRUCTURE: Record<string, Record<string, unknown>> }).STRUCTURE[structure]!;

let sim: MgmtSimulator;
beforeAll(async () => {
  sim = await startSim({ hostname: 'localhost' });
});
afterAll(async () => {
  await sim?.close();
});

async function login(): Promise<string> {
  const result = await invoke(sim, SESSION, 'create', userPass());
  return (result.output as { SECRET: string }).SECRET;
}

describe('vAPI JSON-RPC on POST /api', () => {
  it('logs in with the user_pass scheme (the output a SECRET), refuses a wrong password as Unauthenticated, and logs out', async () => {
    const id = await login();
    expect(id).toMatch(/^\w+$/);
    const refused = stdError(await invoke(sim, SESSION, 'create', userPass(USER, 'wrong')));
    expect(refused.name).toBe('com.vmware.vapi.std.errors.unauthenticated');
    expect(refused.fields.error_type).toEqual({ OPTIONAL: 'UNAUTHENTICATED' });
    expect(refused.fields.data).toEqual({ OPTIONAL: null });
    expect(refused.fields.challenge).toEqual({ OPTIONAL: expect.stringMatching(/^Basic realm=/) });
    expect(refused.messages[0]).toMatchObject({ id: expect.any(String), default_message: expect.stringMatching(/password/), args: [] });
    expect(JSON.stringify(refused)).not.toContain('wrong');

    expect((await invoke(sim, SESSION, 'delete', sessionCtx(id))).output).toBeNull();
    expect(stdError(await invoke(sim, TLS, 'get', sessionCtx(id))).name).toBe('com.vmware.vapi.std.errors.unauthenticated');
    expect(stdError(await invoke(sim, TLS, 'get', undefined)).name).toBe('com.vmware.vapi.std.errors.unauthenticated');
  });

  it('reads the certificate as Tls.Info with every field of the binding', async () => {
    const output = (await invoke(sim, TLS, 'get', sessionCtx(await login()))).output;
    const info = fieldsOf(output, 'com.vmware.vcenter.certificate_management.vcenter.tls.info');
    expect(Object.keys(info).sort()).toEqual(
      [
        'version',
        'serial_number',
        'signature_algorithm',
        'issuer_dn',
        'valid_from',
        'valid_to',
        'subject_dn',
        'thumbprint',
        'is_CA',
        'path_length_constraint',
        'key_usage',
        'extended_key_usage',
        'subject_alternative_name',
        'authority_information_access_uri',
        'cert',
      ].sort(),
    );
    expect(new X509Certificate(info.cert as string).fingerprint256).toBe(new X509Certificate(sim.currentCertPem()).fingerprint256);
  });

  it('answers an envelope it cannot read with the JSON-RPC error codes, and an unknown operation with OperationNotFound', async () => {
    const raw = await fetchRaw('{"jsonrpc": "2.0", "method": ');
    expect(raw).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    const other = await call(sim, 'POST', '/api', { body: { jsonrpc: '2.0', method: 'describe', params: {}, id: '7' } });
    expect(other.body).toMatchObject({ id: '7', error: { code: -32601 } });
    const unknown = stdError(await invoke(sim, 'com.vmware.vcenter.vm', 'list', sessionCtx(await login())));
    expect(unknown.name).toBe('com.vmware.vapi.std.errors.operation_not_found');
  });

  it('trusts a CA as a chain (create, list, get, delete) and replaces with a certificate it signed, without root_cert', async () => {
    const id = await login();
    const ca = await testCa();
    const spec = {
      STRUCTURE: {
        'com.vmware.vcenter.certificate_management.vcenter.trusted_root_chains.create_spec': {
          cert_chain: { STRUCTURE: { 'com.vmware.vcenter.certificate_management.x509_cert_chain': { cert_chain: [ca.certPem] } } },
          chain: { OPTIONAL: 'depot-ca' },
        },
      },
    };
    expect((await invoke(sim, CHAINS, 'create', sessionCtx(id), { spec })).output).toBe('depot-ca');
    expect(stdError(await invoke(sim, CHAINS, 'create', sessionCtx(id), { spec })).name).toBe('com.vmware.vapi.std.errors.already_exists');
    const listed = (await invoke(sim, CHAINS, 'list', sessionCtx(id))).output as unknown[];
    expect(listed.map((s) => fieldsOf(s, 'com.vmware.vcenter.certificate_management.vcenter.trusted_root_chains.summary').chain)).toContain('depot-ca');
    const got = fieldsOf(
      (await invoke(sim, CHAINS, 'get', sessionCtx(id), { chain: 'depot-ca' })).output,
      'com.vmware.vcenter.certificate_management.vcenter.trusted_root_chains.info',
    );
    expect(fieldsOf(got.cert_chain, 'com.vmware.vcenter.certificate_management.x509_cert_chain').cert_chain).toEqual([ca.certPem.trim() + '\n']);

    // The CSR spec with its optional fields as the binding sends them (key_size and SAN set, common_name unset).
    const csrSpec = {
      STRUCTURE: {
        'com.vmware.vcenter.certificate_management.vcenter.tls_csr.spec': {
          key_size: { OPTIONAL: 2048 },
          common_name: { OPTIONAL: null },
          organization: 'depotkit',
          organization_unit: '',
          locality: 'Here',
          state_or_province: 'There',
          country: 'US',
          email_address: 'ops@example.com',
          subject_alt_name: { OPTIONAL: ['localhost', '127.0.0.1'] },
        },
      },
    };
    const csr = fieldsOf(
      (await invoke(sim, CSR, 'create', sessionCtx(id), { spec: csrSpec })).output,
      'com.vmware.vcenter.certificate_management.vcenter.tls_csr.info',
    ).csr as string;
    const certPem = await signCsr(ca, csr, { days: 365, allowIpOnly: true });
    const tlsSpec = {
      STRUCTURE: { 'com.vmware.vcenter.certificate_management.vcenter.tls.spec': { cert: certPem, key: { OPTIONAL: null }, root_cert: { OPTIONAL: null } } },
    };
    expect((await invoke(sim, TLS, 'set', sessionCtx(id), { spec: tlsSpec })).output).toBeNull();
    await sim.ready();
    trust = ca.certPem;
    await until(
      async () => new X509Certificate(sim.currentCertPem()).fingerprint256,
      (f) => f === new X509Certificate(certPem).fingerprint256,
      'the new certificate',
    );

    // Deleted, the chain is gone; a restart ended the session, so log in again.
    const again = await login();
    expect((await invoke(sim, CHAINS, 'delete', sessionCtx(again), { chain: 'depot-ca' })).output).toBeNull();
    expect(stdError(await invoke(sim, CHAINS, 'get', sessionCtx(again), { chain: 'depot-ca' })).name).toBe('com.vmware.vapi.std.errors.not_found');
  }, 60_000);
});

/** A body that is not JSON at all, sent as the runtime would send a broken one. */
async function fetchRaw(text: string): Promise<unknown> {
  const { Agent, request } = await import('undici');
  const agent = new Agent({ connect: { ca: sim.currentCertPem() } });
  try {
    const res = await request(`${sim.url}/api`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text, dispatcher: agent });
    expect(res.statusCode).toBe(200);
    return await res.body.json();
  } finally {
    await agent.close();
  }
}
