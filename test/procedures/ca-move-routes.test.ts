import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { INSTALLER_API } from '../../src/constants.js';
import { InstallerClient } from '../../src/installer/index.js';
import { selfSignedServerCertificate, sha256Fingerprint } from '../../src/cert/index.js';
import { moveDepotCa, type CaMoveOptions, type CaMoveReport, type ConsumerRow } from '../../src/procedures/index.js';
import type { InstallerSimulator } from '../../src/simulators/installer/index.js';
import { PASSWORD, USER } from '../installer/helpers.js';
import { MOVE_PHASES, holds, useMoveFixture, serveMoveOptions, whileValidating, type MoveFixture } from './ca-move-fixture.js';

function options(fx: MoveFixture, extra: Partial<CaMoveOptions> = {}): CaMoveOptions {
  return serveMoveOptions(fx, { concurrency: 4, ...extra });
}

const SETTINGS_LINE = 'Updating depot settings: ';

/** The certificates (by SHA-256) each depot settings update the consumer received since `from` carried; updates without any are left out. */
function certificatesSent(sim: InstallerSimulator, from: number): string[][] {
  return sim.logs
    .slice(from)
    .filter((l) => l.includes(SETTINGS_LINE))
    .map((l) => JSON.parse(l.slice(l.indexOf(SETTINGS_LINE) + SETTINGS_LINE.length)) as { depotConfiguration: { trustedCertificates?: string[] } })
    .flatMap(({ depotConfiguration: c }) => (c.trustedCertificates ? [c.trustedCertificates.map((pem) => sha256Fingerprint(pem))] : []));
}

/** How many separate imports of a trusted certificate the consumer answered since `from`. */
function separateImports(sim: InstallerSimulator, from: number): number {
  return sim.logs.slice(from).filter((l) => l.includes(` [http] POST ${INSTALLER_API.trustedCertificates} `)).length;
}

function rowsOf(report: CaMoveReport, phase: string): Array<ConsumerRow<{ action?: string; via?: string; kept?: string[] }>> {
  return report.phases.find((p) => p.phase === phase)!.rows! as Array<ConsumerRow<{ action?: string; via?: string; kept?: string[] }>>;
}

const takesTrustedCertificates = (version: string | undefined) => /^9\.1\.[1-9]/.test(version ?? '');

describe('the CA move gives each consumer the new CA the way its version takes it', () => {
  // Twelve consumers: 9.0.2, 9.1.0 and 9.1.1, each as an installer and as an SDDC Manager.
  const CONSUMERS = 12;
  let fx: MoveFixture;
  useMoveFixture('depotkit-ca-move-routes-', CONSUMERS, (made) => (fx = made), { each: true });

  it('9.1.1 consumers get it with their depot settings (the old CA along until the switch), earlier ones by the separate import; zero failed validations; a re-run after the retire never sends the old CA back', async () => {
    const from = fx.sims.map((s) => s!.logs.length);
    const { result: report, tally } = await whileValidating(fx, () => moveDepotCa(options(fx, { removeOld: true })));
    expect(tally.failed).toEqual([]);
    expect(report.phases.map((p) => [p.phase, p.ok])).toEqual(MOVE_PHASES.map((phase) => [phase, true]));
    const [newSha, oldSha] = [sha256Fingerprint(fx.newCa.certPem), sha256Fingerprint(fx.oldCa.certPem)];
    const imported = rowsOf(report, 'import');
    const revalidated = rowsOf(report, 'revalidate');
    expect(new Set(imported.map((r) => `${r.role} ${r.version?.slice(0, 5)}`)).size).toBe(6);
    for (const [i, sim] of fx.sims.entries()) {
      const row = imported[i]!;
      if (takesTrustedCertificates(row.version)) {
        expect(row.result).toEqual({ action: 'imported', via: 'depot-settings', kept: [oldSha] });
        expect(revalidated[i]!.result).toMatchObject({ via: 'depot-settings', status: 'DEPOT_CONNECTION_SUCCESSFUL' });
        // Before the switch the new CA with the old one; after it, the new one alone.
        expect(certificatesSent(sim!, from[i]!)).toEqual([[newSha, oldSha], [newSha]]);
        expect(separateImports(sim!, from[i]!)).toBe(0);
      } else {
        expect(row.result).toEqual({ action: 'imported', via: 'trusted-certificates' });
        expect(revalidated[i]!.result).not.toHaveProperty('via');
        expect(certificatesSent(sim!, from[i]!)).toEqual([]);
        expect(separateImports(sim!, from[i]!)).toBe(1);
      }
      expect([await holds(sim!, fx.newCa.certPem), await holds(sim!, fx.oldCa.certPem)]).toEqual([true, false]);
    }

    // Afresh, as if the state were lost, with one 9.1.1 consumer that lost the new CA meanwhile.
    await rm(report.plan.stateFile);
    const lost = imported.findIndex((r) => takesTrustedCertificates(r.version));
    const client = await InstallerClient.connect({ url: fx.sims[lost]!.url, user: USER, password: PASSWORD, trust: { insecure: true } });
    const alias = (await client.listTrusted()).elements.find((e) => sha256Fingerprint(e.certificate) === newSha)!.alias;
    await client.deleteTrusted(alias);
    await client.close();
    const again = fx.sims.map((s) => s!.logs.length);
    const rerun = await moveDepotCa(options(fx, { removeOld: true }));
    expect(rerun.ok).toBe(true);
    const reimported = rowsOf(rerun, 'import');
    for (const [i, sim] of fx.sims.entries()) {
      if (i === lost) expect(reimported[i]!.result).toEqual({ action: 'imported', via: 'depot-settings' });
      else expect(reimported[i]!.result).toMatchObject({ action: 'already-trusted' });
      // A consumer holding the new CA is sent nothing in the import; the revalidation sends 9.1.1 the new CA alone.
      const updates = takesTrustedCertificates(reimported[i]!.version) ? (i === lost ? [[newSha], [newSha]] : [[newSha]]) : [];
      expect(certificatesSent(sim!, again[i]!)).toEqual(updates);
      expect(separateImports(sim!, again[i]!)).toBe(0);
      expect([await holds(sim!, fx.newCa.certPem), await holds(sim!, fx.oldCa.certPem)]).toEqual([true, false]);
    }
  }, 240_000);
});

/**
 * An HTTPS proxy to a consumer that drops the certificates of every depot
 * settings update: a consumer that takes the update but neither lists nor
 * trusts what it carried, the worst reading of what the API leaves unsaid.
 */
async function droppingProxy(sim: InstallerSimulator): Promise<{ url: string; close: () => Promise<void> }> {
  const tls = await selfSignedServerCertificate('localhost', '127.0.0.1', 2);
  const agent = new Agent({ connect: { ca: sim.caPem } });
  const server: Server = createServer({ key: tls.keyPem, cert: tls.certPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks).toString('utf8');
      if (req.method === 'PUT' && req.url === INSTALLER_API.depotSettings) {
        const settings = JSON.parse(body) as { depotConfiguration: { trustedCertificates?: string[] } };
        delete settings.depotConfiguration.trustedCertificates;
        body = JSON.stringify(settings);
      }
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'content-type'] as const) if (req.headers[name]) headers[name] = req.headers[name]!;
      void request(`${sim.url}${req.url}`, { method: req.method as 'GET', headers, body: body === '' ? undefined : body, dispatcher: agent }).then(
        async (up) => {
          res.writeHead(up.statusCode, { 'content-type': 'application/json' });
          res.end(await up.body.text());
        },
        () => res.destroy(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await agent.close();
    },
  };
}

describe('a 9.1.1 consumer whose list does not show what its depot settings carried', () => {
  let fx: MoveFixture;
  useMoveFixture('depotkit-ca-move-unlisted-', 3, (made) => (fx = made), { each: true });

  it('gets the new CA by the separate import after it, proven by the list before the switch, and validates the depot after it', async () => {
    // consumer-2 is the 9.1.1 installer.
    const proxy = await droppingProxy(fx.sims[2]!);
    try {
      const consumers = fx.targets.map((t, i) => (i === 2 ? { ...t, url: proxy.url } : t));
      const from = fx.sims[2]!.logs.length;
      const report = await moveDepotCa(options(fx, { consumers }));
      expect(report.ok).toBe(true);
      expect(rowsOf(report, 'import')[2]).toMatchObject({
        version: expect.stringMatching(/^9\.1\.1/),
        result: { action: 'imported', via: 'trusted-certificates', unlistedAfterSettings: true },
      });
      expect(rowsOf(report, 'prove')[2]!.ok).toBe(true);
      expect(rowsOf(report, 'revalidate')[2]).toMatchObject({ ok: true, result: { status: 'DEPOT_CONNECTION_SUCCESSFUL' } });
      expect(separateImports(fx.sims[2]!, from)).toBe(1);
      expect(await holds(fx.sims[2]!, fx.newCa.certPem)).toBe(true);
    } finally {
      await proxy.close();
    }
  }, 120_000);
});
