import { X509Certificate } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { MGMT_API, MGMT_ERROR_TYPES } from '../../src/constants.js';
import { MGMT_MESSAGE_IDS } from '../../src/simulators/vcenter/literals.js';
import { MgmtApiError, MgmtClient, csrSpec, replaceCertificate, type ReplaceCertOptions } from '../../src/vcenter/index.js';
import { errorBody, message } from '../../src/vcenter/wire.js';
import { createCa, issueServerCert, normalizePem, sha256Fingerprint } from '../../src/cert/index.js';
import type { MgmtSimulator } from '../../src/simulators/vcenter/index.js';
import { DepotkitError } from '../../src/util/errors.js';
import { handshake } from '../../src/vcenter/served.js';
import { PASSWORD, USER, forgeCa, startSim, startTweakedServer, testCa } from './helpers.js';
import { until } from '../helpers/poll.js';
import { onTheCommandLine } from '../cert/words.js';

let sims: MgmtSimulator[] = [];
afterEach(async () => {
  await Promise.all(sims.map((s) => s.close()));
  sims = [];
});

async function sim(opts: Parameters<typeof startSim>[0] = {}): Promise<MgmtSimulator> {
  const s = await startSim(opts);
  sims.push(s);
  return s;
}

async function options(s: Pick<MgmtSimulator, 'url' | 'currentCertPem'>, extra: Partial<ReplaceCertOptions> = {}): Promise<ReplaceCertOptions> {
  return {
    server: s.url,
    user: USER,
    password: PASSWORD,
    ca: await testCa(),
    serverCaPems: [s.currentCertPem()],
    keySize: 2048,
    pollMs: 50,
    waitTimeoutMs: 20_000,
    ...extra,
  };
}

const DAY = 86_400_000;

describe('replaceCertificate: the whole flow', () => {
  for (const api of ['api', 'rest'] as const) {
    it(`replaces through the /${api} API, waits through the restart and verifies the new certificate`, async () => {
      const s = await sim();
      const before = s.currentCertPem();
      const steps: string[] = [];
      const report = await replaceCertificate(await options(s, { api, subject: { organization: 'Lab', san: ['vc.lab.local'] }, onStep: (x) => steps.push(x) }));
      expect(report).toMatchObject({ ok: true, api, mode: 'csr', dryRun: false, findings: [], verified: { trusted: true, hostname: true } });
      expect(report.previous.sha256).toBe(sha256Fingerprint(before));
      expect(report.certificate!.sha256).toBe(sha256Fingerprint(s.currentCertPem()));
      expect(report.certificate!.issuer).toBe('CN=depotkit test CA');
      expect(report.certificate!.san).toEqual(['vc.lab.local', '127.0.0.1']);
      expect(report.csrSpec).toEqual({ common_name: '127.0.0.1', subject_alt_name: ['127.0.0.1', 'vc.lab.local'], key_size: 2048, organization: 'Lab' });
      const served = new X509Certificate(s.currentCertPem());
      // A server-made CSR leads to the fixed two years.
      expect(new Date(served.validTo).getTime() - new Date(served.validFrom).getTime()).toBe(730 * DAY);
      expect(served.verify(new X509Certificate((await testCa()).certPem).publicKey)).toBe(true);
      expect(s.restarts()).toBe(1);
      expect(report.restart!.polls).toBeGreaterThanOrEqual(1);
      expect(steps.join('\n')).not.toContain(PASSWORD);
    });
  }

  it("reached by IP, asks for the server's own DNS name as CN and keeps the IP in the SAN", async () => {
    const s = await sim({ hostname: 'vc.lab.local' });
    const report = await replaceCertificate(await options(s));
    expect(report.csrSpec).toMatchObject({ common_name: 'vc.lab.local', subject_alt_name: ['vc.lab.local', '127.0.0.1'] });
    expect(report).toMatchObject({ ok: true, certificate: { subject: 'CN=vc.lab.local', san: ['vc.lab.local', '127.0.0.1'] } });
  });

  it('reached as localhost while its certificate names 127.0.0.1 (its own name), keeps both names in the new SAN', async () => {
    const s = await sim({ hostname: '127.0.0.1' });
    // The current certificate does not name localhost: a user reaches such a server with --insecure.
    const report = await replaceCertificate({
      ...(await options(s)),
      server: s.url.replace('127.0.0.1', 'localhost'),
      serverCaPems: undefined,
      insecure: true,
    });
    expect(report.csrSpec).toMatchObject({ common_name: 'localhost', subject_alt_name: ['localhost', '127.0.0.1'] });
    expect(report).toMatchObject({
      ok: true,
      certificate: { subject: 'CN=localhost', san: ['localhost', '127.0.0.1'] },
      verified: { trusted: true, hostname: true },
    });
    expect(s.restarts()).toBe(1);
  });

  it('keeps every DNS name and IP of the current certificate, besides the host it was reached by', async () => {
    const s = await sim({ hostname: 'vc.lab.local' });
    const spec = csrSpec({ san: ['extra.lab.local'] }, '127.0.0.1', 2048, ['vc.lab.local', 'vc', '*.lab.local', '10.0.0.5', '127.0.0.1']);
    // Wildcards are left out: the server's CSR names hosts, and the real server refuses wildcard machine certificates.
    expect(spec).toMatchObject({ common_name: 'vc.lab.local', subject_alt_name: ['vc.lab.local', 'extra.lab.local', '127.0.0.1', 'vc', '10.0.0.5'] });
    const report = await replaceCertificate(await options(s, { subject: { san: ['extra.lab.local'] } }));
    expect(report).toMatchObject({ ok: true, certificate: { san: ['vc.lab.local', 'extra.lab.local', '127.0.0.1'] } });
  });

  it('signs with an intermediate CA and sends it with the root as root_cert (/rest), so the server serves the chain', async () => {
    const s = await sim();
    const root = forgeCa('Library Root CA');
    const issuing = forgeCa('Library Issuing CA', root);
    const report = await replaceCertificate(await options(s, { api: 'rest', ca: { certPem: `${issuing.certPem}${root.certPem}`, keyPem: issuing.keyPem } }));
    expect(report).toMatchObject({ ok: true, api: 'rest', certificate: { issuer: 'CN=Library Issuing CA' }, verified: { trusted: true, hostname: true } });
    expect(await handshake(new URL(s.url), { caPems: [root.certPem] })).toMatchObject({ ok: true, authorized: true });
    // In the wrong order (root first), it is refused before any call.
    const created = s.sessionsCreated();
    const wrong = replaceCertificate(
      await options(s, { ca: { certPem: `${root.certPem}${issuing.certPem}`, keyPem: issuing.keyPem }, serverCaPems: [root.certPem] }),
    );
    await expect(wrong).rejects.toThrow(/is not a self-signed root and its issuers up to the root are not given/);
    // Without the root after it, too.
    const alone = replaceCertificate(await options(s, { ca: { certPem: issuing.certPem, keyPem: issuing.keyPem }, serverCaPems: [root.certPem] }));
    await expect(alone).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('(CN=Library Issuing CA) is not a self-signed root') });
    expect(s.sessionsCreated()).toBe(created);
  });

  it('signs the validity asked for through /rest, with the subject fields given', async () => {
    const s = await sim();
    const report = await replaceCertificate(await options(s, { api: 'rest', days: 365, subject: { organization: 'Lab' } }));
    expect(Date.parse(report.certificate!.notAfter) - Date.parse(report.certificate!.notBefore)).toBe(365 * DAY);
    expect(report).toMatchObject({
      ok: true,
      api: 'rest',
      verified: { trusted: true, hostname: true },
      certificate: { subject: 'O=Lab, CN=127.0.0.1', issuer: 'CN=depotkit test CA' },
    });
    expect(report.certificate!.sha256).toBe(sha256Fingerprint(s.currentCertPem()));
  });

  it('refuses a plain HTTP server and a validity that outlives the CA before asking the server anything', async () => {
    const s = await sim();
    await expect(replaceCertificate(await options(s, { server: 'http://127.0.0.1:1' }))).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('reached over HTTPS'),
    });
    await expect(replaceCertificate(await options(s, { days: 5000 }))).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('would outlive the CA'),
    });
    expect(s.sessionsCreated()).toBe(0);
  });

  it('auto picks /api when the server has it and falls back to /rest on an older server', async () => {
    const both = await sim();
    const client = await MgmtClient.connect({ server: both.url, user: USER, password: PASSWORD, trust: { caPems: [both.currentCertPem()] } });
    expect(client.generation).toBe('api');
    await client.close();
    const old = await sim({ generations: ['rest'] });
    const report = await replaceCertificate(await options(old));
    expect(report).toMatchObject({ ok: true, api: 'rest' });
  });

  it('installs a certificate made elsewhere, with its key, from a CRLF chain file', async () => {
    const s = await sim({ hostname: 'localhost' });
    const ca = await testCa();
    const made = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], days: 90 });
    const crlf = (t: string) => t.replace(/\n/g, '\r\n');
    const report = await replaceCertificate(
      await options(s, { ca: { certPem: crlf(ca.certPem) }, custom: { certPem: crlf(made.chainPem), keyPem: crlf(made.keyPem) } }),
    );
    expect(report).toMatchObject({ ok: true, mode: 'custom', verified: { trusted: true, hostname: true } });
    // The simulator refuses CRLF, so this proves the client sent LF only.
    expect(s.currentCertPem()).toBe(normalizePem(made.certPem));
    const served = new X509Certificate(s.currentCertPem());
    expect(new Date(served.validTo).getTime() - new Date(served.validFrom).getTime()).toBe(90 * DAY);
  });

  it('shows the server refusing the same certificate twice', async () => {
    const s = await sim();
    const made = await issueServerCert(await testCa(), { dns: ['localhost'], ips: ['127.0.0.1'] });
    const custom = { certPem: made.certPem, keyPem: made.keyPem };
    await replaceCertificate(await options(s, { custom }));
    // Through /rest this time: its error shape ({type: com.vmware.vapi.std.errors.invalid_argument, value}) is read too.
    const again = replaceCertificate(await options(s, { custom, api: 'rest', serverCaPems: [(await testCa()).certPem] }));
    await expect(again).rejects.toThrow(MgmtApiError);
    await expect(again).rejects.toThrow(
      /Replacing the certificate failed: the server answered 400 INVALID_ARGUMENT: The certificate is the same as the current/,
    );
    expect(s.restarts()).toBe(1);
  });

  it('refuses locally a certificate whose chain does not lead to the given CA, and shows the server refusing a wrong root', async () => {
    const s = await sim();
    const otherCa = await createCa({ cn: 'another CA', keySize: 2048 });
    const made = await issueServerCert(await testCa(), { dns: ['localhost'], ips: ['127.0.0.1'] });
    const local = replaceCertificate(await options(s, { ca: otherCa, custom: { certPem: made.certPem, keyPem: made.keyPem } }));
    await expect(local).rejects.toThrow(/not issued by the given CA/);
    const client = await MgmtClient.connect({ server: s.url, user: USER, password: PASSWORD, trust: { caPems: [s.currentCertPem()] } });
    try {
      const err = await client.replaceTls({ cert: made.certPem, key: made.keyPem, root_cert: otherCa.certPem }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MgmtApiError);
      expect(err).toMatchObject({ status: 400, type: 'INVALID_ARGUMENT', messages: [expect.stringMatching(/trustAnchors parameter must be non-empty/)] });
    } finally {
      await client.close();
    }
    expect(s.restarts()).toBe(0);
  });

  it('gives up waiting after the timeout when the restart takes longer, saying the replacement was accepted', async () => {
    const s = await sim({ restartMs: 60_000 });
    const err = await replaceCertificate(await options(s, { waitTimeoutMs: 300 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DepotkitError);
    expect(err).toMatchObject({
      exitCode: 1,
      message: expect.stringMatching(/did not serve the new certificate within 0\.3 s \(last: not listening\)/),
      fix: expect.stringMatching(/accepted/),
    });
    expect(s.restarts()).toBe(1);
  });

  it('logs in again when the session expired, or reports it when told not to', async () => {
    const s = await sim({ sessionIdleMs: 200 });
    const trust = { caPems: [s.currentCertPem()] };
    const client = await MgmtClient.connect({ server: s.url, user: USER, password: PASSWORD, trust });
    await until(() => s.liveSessions() === 0, 'the session to expire');
    expect((await client.getTls()).cert).toBe(s.currentCertPem());
    expect(client.logins).toBe(2);
    await client.close();
    const strict = await MgmtClient.connect({ server: s.url, user: USER, password: PASSWORD, trust, reauthenticate: false });
    await until(() => s.liveSessions() === 0, 'the session to expire');
    await expect(strict.getTls()).rejects.toThrow(/Reading the certificate failed: the server answered 401 UNAUTHENTICATED: .*expired/);
    await strict.close();
  });

  it('a dry run logs in and plans, changes nothing, and spots the certificate already served', async () => {
    const s = await sim();
    const before = s.currentCertPem();
    const created = s.sessionsCreated();
    const plan = await replaceCertificate(await options(s, { dryRun: true, subject: { cn: 'vc.lab.local' } }));
    expect(plan).toMatchObject({ ok: true, dryRun: true, csrSpec: { common_name: 'vc.lab.local', subject_alt_name: ['vc.lab.local', '127.0.0.1'] } });
    expect(plan.certificate).toBeUndefined();
    expect(s.sessionsCreated()).toBe(created + 1);
    // The session was ended, not left to expire.
    expect(s.liveSessions()).toBe(0);
    expect(s.currentCertPem()).toBe(before);
    expect(s.restarts()).toBe(0);

    // Install a certificate made elsewhere, then plan to install that same one again.
    const ca = await testCa();
    const made = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'] });
    const custom = { certPem: made.certPem, keyPem: made.keyPem };
    expect(await replaceCertificate(await options(s, { custom }))).toMatchObject({ ok: true });
    const served = s.currentCertPem();
    const again = await replaceCertificate(await options(s, { custom, dryRun: true, serverCaPems: [ca.certPem] }));
    expect(again).toMatchObject({
      ok: false,
      dryRun: true,
      mode: 'custom',
      findings: [
        expect.objectContaining({ id: 'mgmt.cert.already-served', severity: 'error', message: 'The certificate is the one the server serves already.' }),
      ],
      previous: { sha256: sha256Fingerprint(served) },
      certificate: { sha256: sha256Fingerprint(served) },
    });
    expect(s.restarts()).toBe(1);
    expect(s.currentCertPem()).toBe(served);
  });

  it('ends its session even when the first read of the certificate fails', async () => {
    const server = await startTweakedServer((app) => {
      app.get(MGMT_API.api.tls, (_req, res) => {
        res.status(500).json(errorBody('api', MGMT_ERROR_TYPES.error, [message(MGMT_MESSAGE_IDS.badRequest, 'The certificate store is not available.')]));
      });
    });
    try {
      const err = await replaceCertificate(await options(server, { api: 'api' })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MgmtApiError);
      expect(err).toMatchObject({ status: 500, messages: ['The certificate store is not available.'] });
      expect(server.state.sessions.created).toBe(1);
      expect(server.state.sessions.live()).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("fails with exit 1 (not a usage error) when the server's CSR leaves out the host name, and installs nothing", async () => {
    const server = await startTweakedServer((app) => {
      // A server that names only itself in its CSR, whatever the request asks for.
      app.post(MGMT_API.api.tlsCsr, (req, _res, next) => {
        req.body = { ...req.body, common_name: 'elsewhere.lab.local', subject_alt_name: ['elsewhere.lab.local'] };
        next();
      });
    });
    try {
      const before = server.state.current.certPem;
      const err = await replaceCertificate(await options(server, { api: 'api' })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DepotkitError);
      expect(err).toMatchObject({ exitCode: 1, message: expect.stringMatching(/CSR does not request the name 127\.0\.0\.1; .*not installed/) });
      expect(server.state.current.certPem).toBe(before);
      expect(server.state.sessions.live()).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('says which option to use when the current certificate is not trusted, and refuses wrong credentials', async () => {
    const s = await sim();
    const untrusted = replaceCertificate({ ...(await options(s)), serverCaPems: undefined });
    await expect(untrusted).rejects.toThrow(DepotkitError);
    await expect(untrusted).rejects.toThrow(/does not trust \(DEPTH_ZERO_SELF_SIGNED_CERT\)/);
    const { fix, exitCode } = (await untrusted.catch((e: unknown) => e)) as DepotkitError;
    expect(exitCode).toBe(1);
    expect(onTheCommandLine(fix)).toContain('--server-ca FILE');
    const insecure = await replaceCertificate({ ...(await options(s, { dryRun: true })), serverCaPems: undefined, insecure: true });
    expect(insecure.ok).toBe(true);
    const wrong = replaceCertificate(await options(s, { password: 'not-it' }));
    await expect(wrong).rejects.toThrow(/refused the user name or password of administrator@vsphere\.local/);
    await expect(wrong).rejects.not.toThrow(/not-it/);
  });
});
