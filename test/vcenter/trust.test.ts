/**
 * depotkit's vCenter client and the trusted root chains, against `sim vcenter`: `vcenter trust`
 * adds a CA once (a chain holding it, compared by SHA-256, is left as it is), lists and removes
 * it; the replacement can go through a trusted chain instead of root_cert.
 */
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MGMT_API } from '../../src/constants.js';
import { listVcenterTrust, replaceCertificate, trustVcenterCa, untrustVcenterCa } from '../../src/vcenter/index.js';
import { sha256Fingerprint } from '../../src/cert/index.js';
import type { MgmtSimulator } from '../../src/simulators/vcenter/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { PASSWORD, USER, startSim, startTweakedServer, testCa, writeFixtures } from './helpers.js';

describe.each(['api', 'rest'] as const)('vcenter trust over /%s', (api) => {
  let sim: MgmtSimulator;
  beforeAll(async () => {
    sim = await startSim();
  });
  afterAll(async () => {
    await sim?.close();
  });
  const opts = () => ({ server: sim.url, user: USER, password: PASSWORD, api, serverCaPems: [sim.currentCertPem()] });

  it('adds the CA once, finds it again by SHA-256 whatever its PEM text, lists it, and removes it', async () => {
    const ca = await testCa();
    const before = (await listVcenterTrust(opts())).chains.length;
    const added = await trustVcenterCa({ ...opts(), caPem: ca.certPem });
    expect(added).toMatchObject({ api, changed: true, ca: { sha256: sha256Fingerprint(ca.certPem) } });
    expect(added.chains).toHaveLength(1);

    // The same certificate with CRLF line ends and a header line before it: still the one held.
    const again = await trustVcenterCa({ ...opts(), caPem: `subject=CN = depotkit test CA\r\n${ca.certPem.replace(/\n/g, '\r\n')}` });
    expect(again).toMatchObject({ changed: false, chains: added.chains });

    const listed = await listVcenterTrust(opts());
    expect(listed.chains).toHaveLength(before + 1);
    const held = listed.chains.find((c) => c.chain === added.chains[0]);
    expect(held?.certificates.map((c) => c.sha256)).toEqual([sha256Fingerprint(ca.certPem)]);

    expect(await untrustVcenterCa({ ...opts(), caPem: ca.certPem })).toMatchObject({ changed: true, chains: added.chains });
    expect(await untrustVcenterCa({ ...opts(), caPem: ca.certPem })).toMatchObject({ changed: false, chains: [] });
    expect((await listVcenterTrust(opts())).chains).toHaveLength(before);
  });
});

describe('the replacement through a trusted chain', () => {
  it('trusts the CA first and sends the certificate without root_cert', async () => {
    const sent: Array<Record<string, unknown>> = [];
    // The tweaked server records the replace request; it does not restart, so the wait for the new certificate fails.
    const server = await startTweakedServer((app: express.Express) => {
      app.put(MGMT_API.api.tls, express.json(), (req, _res, next) => {
        sent.push(req.body as Record<string, unknown>);
        next();
      });
    });
    try {
      const ca = await testCa();
      const run = replaceCertificate({
        server: server.url,
        user: USER,
        password: PASSWORD,
        ca,
        serverCaPems: [server.currentCertPem()],
        trustedChain: true,
        waitTimeoutMs: 1000,
        pollMs: 100,
      });
      await expect(run).rejects.toThrow(/did not serve the new certificate/);
      expect(sent).toHaveLength(1);
      expect(sent[0]).toHaveProperty('cert');
      expect(sent[0]).not.toHaveProperty('root_cert');
      expect(server.state.chains.pems().map(sha256Fingerprint)).toContain(sha256Fingerprint(ca.certPem));
    } finally {
      await server.close();
    }
  }, 60_000);

  it('ends with the new certificate served, trusted by the CA', async () => {
    const sim = await startSim();
    try {
      const ca = await testCa();
      const report = await replaceCertificate({
        server: sim.url,
        user: USER,
        password: PASSWORD,
        ca,
        serverCaPems: [sim.currentCertPem()],
        trustedChain: true,
        pollMs: 100,
      });
      expect(report).toMatchObject({ ok: true, trustedChain: { changed: true }, verified: { trusted: true, hostname: true } });
    } finally {
      await sim.close();
    }
  }, 60_000);
});

describe('depotkit vcenter trust', () => {
  it('adds the CA, says so, and lists it as JSON', async () => {
    const { dir, cleanup } = await tempDir();
    const sim = await startSim();
    try {
      const files = await writeFixtures(dir, sim, await testCa());
      const caFile = join(dir, 'ca.pem');
      await writeFile(caFile, (await testCa()).certPem);
      const base = ['vcenter', 'trust', '--server', sim.url, '--user', USER, '--password-file', files.passwordFile, '--server-ca', files.serverCa];
      const first = await runCli([...base, '--ca', caFile]);
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(/now trusts CN=depotkit test CA/);
      // Adding it again changes nothing: trustVcenterCa's test above.
      const listed = await runCli([...base, '--list', '--json']);
      const { chains } = JSON.parse(listed.stdout) as { chains: Array<{ certificates: Array<{ subject: string }> }> };
      expect(chains.flatMap((c) => c.certificates.map((x) => x.subject))).toContain('CN=depotkit test CA');
      expect(first.stdout + first.stderr + listed.stdout + listed.stderr).not.toContain(PASSWORD);
    } finally {
      await sim.close();
      await cleanup();
    }
  }, 60_000);
});
