/**
 * Real clients' requests, replayed as those clients send them, with a raw HTTPS client (not
 * MgmtClient): scripts in curl and Python that leave out vmware-use-header-authn, cookie jars
 * (curl -c/-b), PowerShell's -Credential (credentials only after a Basic challenge), and a
 * root_cert that holds a chain. Status codes, bodies and headers are the real server's.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';
import { join } from 'node:path';
import { connect, type DetailedPeerCertificate } from 'node:tls';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MGMT_API } from '../../src/constants.js';
import type { MgmtSimulator } from '../../src/simulators/vcenter/index.js';
import { tempDir } from '../helpers/temp.js';
import { PASSWORD, USER, basic, forgeCa, forgeSignCsr, startSim, type ForgeCa } from './helpers.js';

const run = promisify(execFile);

/** A session id as the real server makes them (its documentation shows "a5adf880fc8e1e2944a541a4c7d74465"). */
const SESSION_ID = /^[0-9a-f]{32}$/;
const CHALLENGE = 'Basic realm="vCenter"';

interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: unknown;
}

/** One request on a fresh connection, headers exactly as given (node:https adds only Host and Content-Length). */
function raw(url: string, method: string, opts: { headers?: Record<string, string>; body?: string; ca: string | string[] }): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: opts.headers, ca: opts.ca, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        let json: unknown;
        try {
          json = text === '' ? undefined : JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** The `name=value` pair of a Set-Cookie header, for sending it back as a cookie jar does. */
function jarCookie(reply: RawReply): string {
  const setCookie = reply.headers['set-cookie'] ?? [];
  expect(setCookie).toHaveLength(1);
  return setCookie[0]!.split(';')[0]!;
}

/** The headers the curl and Python scripts send: JSON content type and accept, Basic credentials, and often a "null" session header. */
const scriptHeaders = (extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', accept: 'application/json', ...extra });

describe('replayed clients: sessions', () => {
  let sim: MgmtSimulator;
  let ca: string;
  beforeAll(async () => {
    sim = await startSim();
    ca = sim.currentCertPem();
  });
  afterAll(() => sim.close());

  const at = (path: string) => `${sim.url}${path}`;

  it('a curl or Python script without vmware-use-header-authn gets a /rest session: 200 {"value": id} and the cookie', async () => {
    // As the health-check scripts send it: Basic credentials, JSON headers, "vmware-api-session-id: null", no use-header-authn.
    const reply = await raw(at(MGMT_API.rest.session), 'POST', { headers: scriptHeaders({ authorization: basic(), 'vmware-api-session-id': 'null' }), ca });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    const id = (reply.json as { value: string }).value;
    expect(id).toMatch(SESSION_ID);
    expect(Object.keys(reply.json as object)).toEqual(['value']);
    expect(reply.headers['set-cookie']).toEqual([`vmware-api-session-id=${id}; Path=/; HttpOnly; Secure`]);
    // The id works in the header, as those scripts use it next.
    const tls = await raw(at(MGMT_API.rest.tls), 'GET', { headers: scriptHeaders({ 'vmware-api-session-id': id }), ca });
    expect(tls.status).toBe(200);
    expect((tls.json as { value: { cert: string } }).value.cert).toBe(ca);
  });

  it('the /api session answers 201 with the id as a JSON string, and sets the cookie too', async () => {
    const reply = await raw(at(MGMT_API.api.session), 'POST', { headers: { authorization: basic() }, ca });
    expect(reply.status).toBe(201);
    expect(reply.text).toMatch(/^"[0-9a-f]{32}"$/);
    expect(reply.headers['set-cookie']).toEqual([`vmware-api-session-id=${reply.json as string}; Path=/; HttpOnly; Secure`]);
  });

  it('a cookie jar (Set-Cookie, then Cookie on the CSR call) works on both generations, and deleting the session ends it', async () => {
    for (const generation of ['rest', 'api'] as const) {
      const paths = MGMT_API[generation];
      const login = await raw(at(paths.session), 'POST', { headers: { authorization: basic() }, ca });
      const cookie = jarCookie(login);
      const spec = { key_size: 2048, common_name: '127.0.0.1' };
      const csr = await raw(at(paths.tlsCsr), 'POST', {
        headers: { 'content-type': 'application/json', cookie },
        body: JSON.stringify(generation === 'rest' ? { spec } : spec),
        ca,
      });
      expect(csr.status).toBe(generation === 'rest' ? 200 : 201);
      const value = generation === 'rest' ? (csr.json as { value: { csr: string } }).value : (csr.json as { csr: string });
      expect(value.csr).toMatch(/^-----BEGIN CERTIFICATE REQUEST-----\n/);
      // A jar holding a stale cookie of the same name next to the live one still works.
      const stale = await raw(at(paths.tls), 'GET', { headers: { cookie: `other=1; vmware-api-session-id=0123456789abcdef0123456789abcdef; ${cookie}` }, ca });
      expect(stale.status).toBe(200);
      const out = await raw(at(paths.session), 'DELETE', { headers: { cookie }, ca });
      expect(out.status).toBe(generation === 'rest' ? 200 : 204);
      const after = await raw(at(paths.tls), 'GET', { headers: { cookie }, ca });
      expect(after.status).toBe(401);
      expect(after.headers['www-authenticate']).toBe(CHALLENGE);
    }
  });

  it('deleting the session through the header ends it for the cookie too', async () => {
    const login = await raw(at(MGMT_API.api.session), 'POST', { headers: { authorization: basic() }, ca });
    const cookie = jarCookie(login);
    expect((await raw(at(MGMT_API.api.session), 'DELETE', { headers: { 'vmware-api-session-id': login.json as string }, ca })).status).toBe(204);
    expect((await raw(at(MGMT_API.api.tls), 'GET', { headers: { cookie }, ca })).status).toBe(401);
  });

  it('PowerShell -Credential: no credentials first, the Basic challenge, then Basic gets a session (both generations)', async () => {
    for (const generation of ['rest', 'api'] as const) {
      const path = MGMT_API[generation].session;
      const first = await raw(at(path), 'POST', { headers: { 'content-type': 'application/json' }, ca });
      expect(first.status).toBe(401);
      expect(first.headers['www-authenticate']).toBe(CHALLENGE);
      if (generation === 'rest') {
        expect(first.json).toMatchObject({
          type: 'com.vmware.vapi.std.errors.unauthenticated',
          value: { messages: [{ id: expect.any(String), default_message: expect.any(String) }], challenge: CHALLENGE },
        });
      } else {
        expect(first.json).toMatchObject({
          error_type: 'UNAUTHENTICATED',
          messages: [{ id: expect.any(String), default_message: expect.any(String) }],
          challenge: CHALLENGE,
        });
      }
      const second = await raw(at(path), 'POST', { headers: { 'content-type': 'application/json', authorization: basic() }, ca });
      expect(second.status).toBe(generation === 'rest' ? 200 : 201);
      expect(generation === 'rest' ? (second.json as { value: string }).value : second.json).toMatch(SESSION_ID);
    }
  });

  it('every 401 carries the challenge: wrong password, no session, an unknown or a malformed session', async () => {
    const replies = [
      await raw(at(MGMT_API.rest.session), 'POST', { headers: { authorization: basic(USER, 'wrong') }, ca }),
      await raw(at(MGMT_API.api.session), 'POST', { headers: { authorization: 'Basic !!!' }, ca }),
      await raw(at(MGMT_API.rest.tls), 'GET', { ca }),
      await raw(at(MGMT_API.api.tls), 'GET', { headers: { 'vmware-api-session-id': 'null' }, ca }),
      await raw(at(MGMT_API.api.tlsCsr), 'POST', { headers: { 'content-type': 'application/json', cookie: 'vmware-api-session-id=' }, body: '{}', ca }),
      await raw(at(MGMT_API.api.session), 'DELETE', { ca }),
    ];
    expect(replies.map((r) => r.status)).toEqual([401, 401, 401, 401, 401, 401]);
    expect(replies.map((r) => r.headers['www-authenticate'])).toEqual(Array(6).fill(CHALLENGE));
    // None of them opened a session or set a cookie.
    expect(replies.map((r) => r.headers['set-cookie'])).toEqual(Array(6).fill(undefined));
  });

  it('real curl keeps the session in its cookie jar (-c/-b) and makes a CSR with it', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const caFile = join(dir, 'sim.pem');
      const jar = join(dir, 'jar');
      await writeFile(caFile, ca);
      // curl keeping its session in the jar (-c writes it, -b sends it).
      const withJar = (...args: string[]) => run('curl', ['-sS', '--fail-with-body', '-c', jar, '-b', jar, '--cacert', caFile, ...args]);
      const login = await withJar('-u', `${USER}:${PASSWORD}`, '-X', 'POST', at(MGMT_API.rest.session));
      const id = (JSON.parse(login.stdout) as { value: string }).value;
      expect(id).toMatch(SESSION_ID);
      // Netscape jar line: HttpOnly prefix, the host, path /, secure TRUE, a session cookie (expiry 0).
      expect(await readFile(jar, 'utf8')).toContain(`#HttpOnly_127.0.0.1\tFALSE\t/\tTRUE\t0\tvmware-api-session-id\t${id}`);
      const csr = await withJar(
        '-X',
        'POST',
        '-H',
        'Content-Type: application/json',
        '-d',
        JSON.stringify({ spec: { key_size: 2048 } }),
        at(MGMT_API.rest.tlsCsr),
      );
      expect((JSON.parse(csr.stdout) as { value: { csr: string } }).value.csr).toContain('BEGIN CERTIFICATE REQUEST');
      // The same jar ends the session; the next call through it is refused with the challenge.
      await run('curl', ['-sS', '--fail-with-body', '-b', jar, '--cacert', caFile, '-X', 'DELETE', at(MGMT_API.rest.session)]);
      const refused = await run('curl', ['-sS', '-b', jar, '--cacert', caFile, '-D', '-', '-o', '/dev/null', at(MGMT_API.rest.tls)]);
      expect(refused.stdout).toMatch(/^HTTP\/1\.1 401 /);
      expect(refused.stdout).toMatch(/^www-authenticate: Basic realm="vCenter"\r$/im);
    } finally {
      await cleanup();
    }
  });
});

/** The certificates a server sends in its handshake, leaf first (no trust store: nothing is added to what it sent). */
function servedChain(url: string): Promise<string[]> {
  return tlsPeer(url, undefined).then((p) => p.pems);
}

/** Whether the server's handshake verifies for a client that trusts `ca` only. */
function verifiesWith(url: string, ca: string): Promise<boolean> {
  return tlsPeer(url, ca).then((p) => p.authorized);
}

function tlsPeer(url: string, ca: string | undefined): Promise<{ pems: string[]; authorized: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), ...(ca ? { ca } : {}), rejectUnauthorized: false }, () => {
      const pems: string[] = [];
      let cert: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
      while (cert?.raw && !pems.includes(new X509Certificate(cert.raw).toString())) {
        pems.push(new X509Certificate(cert.raw).toString());
        cert = cert.issuerCertificate;
      }
      resolve({ pems, authorized: socket.authorized });
      socket.destroy();
    });
    socket.on('error', reject);
  });
}

describe('replayed clients: root_cert holding a chain (intermediates, then the root)', () => {
  let root: ForgeCa;
  let intermediate: ForgeCa;
  let sim: MgmtSimulator;
  beforeAll(() => {
    root = forgeCa('Replay Root CA');
    intermediate = forgeCa('Replay Issuing CA', root);
  });
  afterEach(() => sim?.close());

  /** A session and a CSR through the cookie, a leaf signed from it by the intermediate: what a script does before the replace. */
  async function leafFromCsr(generation: 'rest' | 'api', ca = sim.currentCertPem()): Promise<{ cookie: string; leaf: string }> {
    const paths = MGMT_API[generation];
    const login = await raw(`${sim.url}${paths.session}`, 'POST', { headers: { authorization: basic() }, ca });
    const cookie = jarCookie(login);
    const spec = { key_size: 2048 };
    const reply = await raw(`${sim.url}${paths.tlsCsr}`, 'POST', {
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify(generation === 'rest' ? { spec } : spec),
      ca,
    });
    const csr = generation === 'rest' ? (reply.json as { value: { csr: string } }).value.csr : (reply.json as { csr: string }).csr;
    return { cookie, leaf: forgeSignCsr(intermediate, csr) };
  }

  for (const generation of ['api', 'rest'] as const) {
    it(`/${generation}: takes the chain, serves leaf + intermediate after the restart, and reports the leaf`, async () => {
      sim = await startSim();
      const { cookie, leaf } = await leafFromCsr(generation);
      const spec = { cert: leaf, root_cert: `${intermediate.certPem}${root.certPem}` };
      const put = await raw(`${sim.url}${MGMT_API[generation].tls}`, 'PUT', {
        headers: { 'content-type': 'application/json', cookie },
        body: JSON.stringify(generation === 'rest' ? { spec } : spec),
        ca: sim.currentCertPem(),
      });
      expect(put.status).toBe(generation === 'rest' ? 200 : 204);
      expect(put.text).toBe('');
      await sim.ready();
      // The leaf comes with its intermediate, so a client that trusts only the root verifies it.
      expect(await servedChain(sim.url)).toEqual([new X509Certificate(leaf).toString(), new X509Certificate(intermediate.certPem).toString()]);
      expect(await verifiesWith(sim.url, root.certPem)).toBe(true);
      // The restart ended the session; a new one reads the leaf alone in GET .../tls.
      const login = await raw(`${sim.url}${MGMT_API.api.session}`, 'POST', { headers: { authorization: basic() }, ca: root.certPem });
      const tls = await raw(`${sim.url}${MGMT_API.api.tls}`, 'GET', { headers: { cookie: jarCookie(login) }, ca: root.certPem });
      expect(tls.status).toBe(200);
      expect(tls.json).toMatchObject({ cert: leaf, issuer_dn: 'CN=Replay Issuing CA', subject_dn: 'CN=127.0.0.1' });
    });
  }

  it('keeps the refusal for a chain whose last certificate is not self-signed, and refuses a chain that misses the intermediate', async () => {
    sim = await startSim();
    const { cookie, leaf } = await leafFromCsr('api');
    const put = (rootCert: string) =>
      raw(`${sim.url}${MGMT_API.api.tls}`, 'PUT', {
        headers: { 'content-type': 'application/json', cookie },
        body: JSON.stringify({ cert: leaf, root_cert: rootCert }),
        ca: sim.currentCertPem(),
      });
    for (const rootCert of [intermediate.certPem, `${root.certPem}${intermediate.certPem}`]) {
      const refused = await put(rootCert);
      expect(refused.status).toBe(400);
      expect(refused.json).toMatchObject({
        error_type: 'INVALID_ARGUMENT',
        messages: [{ default_message: expect.stringContaining('trustAnchors parameter must be non-empty') }],
      });
    }
    const missing = await put(root.certPem);
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.json)).toMatch(/does not verify against root_cert/);
    expect(sim.restarts()).toBe(0);
    // Intermediates in any order before the root are fine.
    const other = forgeCa('Replay Other Issuing CA', root);
    expect((await put(`${other.certPem}${intermediate.certPem}${root.certPem}`)).status).toBe(204);
  });

  it('a later replacement without root_cert chains through the intermediate published by the first', async () => {
    sim = await startSim();
    const first = await leafFromCsr('api');
    const put = (cookie: string, body: object, ca: string) =>
      raw(`${sim.url}${MGMT_API.api.tls}`, 'PUT', { headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify(body), ca });
    expect((await put(first.cookie, { cert: first.leaf, root_cert: `${intermediate.certPem}${root.certPem}` }, sim.currentCertPem())).status).toBe(204);
    await sim.ready();
    // The server now serves the first leaf and its intermediate: a client trusts the root.
    const { cookie, leaf } = await leafFromCsr('api', root.certPem);
    expect((await put(cookie, { cert: leaf }, root.certPem)).status).toBe(204);
    expect(sim.currentCertPem()).toBe(leaf);
  });
});
