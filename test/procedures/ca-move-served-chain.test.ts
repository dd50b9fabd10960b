/**
 * After the switch the move judges the chain the depot serves, read over TLS where this host reaches it, by
 * check's own verdict: a chain check rejects (the server sends the leaf without its intermediate) fails the
 * switch with check's ids before any consumer is asked to validate it. Real TLS: `depotkit serve`, the new
 * certificate issued by an intermediate of the new CA.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { INSTALLER_API } from '../../src/constants.js';
import { issueServerCert } from '../../src/cert/index.js';
import { checkDepot } from '../../src/check/index.js';
import { moveDepotCa, servedLeafSha256, type CaMoveOptions } from '../../src/procedures/index.js';
import { tempDir } from '../helpers/temp.js';
import { forgeCa } from '../vcenter/helpers.js';
import { runCli } from '../helpers/cli.js';
import { DEPOT_PASSWORD, DEPOT_USER } from '../installer/helpers.js';
import { DEPOT_PASSWORD_ENV, PASSWORD_ENV, moveFixture, serveMoveOptions, type MoveFixture } from './ca-move-fixture.js';

/** The depot settings updates each consumer was sent: a validation of the depot. */
function depotUpdates(fx: MoveFixture): number[] {
  return fx.sims.map((sim) => sim!.logs.filter((line) => line.includes(INSTALLER_API.depotSettings) && !line.includes(' GET ')).length);
}

describe('the CA move judges the chain served after the switch', () => {
  let pki: { dir: string; cleanup: () => Promise<void> };
  const newPair = () => ({ newCert: join(pki.dir, 'new-chain.pem'), newKey: join(pki.dir, 'new-key.pem'), newCa: join(pki.dir, 'new-root.pem') });
  let tmp: { dir: string; cleanup: () => Promise<void> } | undefined;
  let fx: MoveFixture | undefined;

  beforeAll(async () => {
    pki = await tempDir('depotkit-ca-move-chain-pki-');
    // The new CA is a root whose intermediate issues the depot's certificate: the chain file holds the leaf, then the intermediate.
    const root = forgeCa('New Root CA');
    const issuing = forgeCa('New Issuing CA', root);
    const leaf = await issueServerCert(issuing, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
    const f = newPair();
    await Promise.all([writeFile(f.newCert, leaf.chainPem), writeFile(f.newKey, leaf.keyPem, { mode: 0o600 }), writeFile(f.newCa, root.certPem)]);
    return () => pki.cleanup();
  }, 60_000);
  afterEach(async () => {
    await fx?.close();
    await tmp?.cleanup();
    fx = tmp = undefined;
  });

  async function fixture(): Promise<MoveFixture> {
    tmp = await tempDir('depotkit-ca-move-chain-');
    // Two consumers, 9.0.2 and 9.1.0: the new CA goes by the separate import, so any depot settings update is a validation.
    fx = await moveFixture(tmp.dir, 2);
    return fx;
  }

  it('a served chain check accepts: no finding on the switch, and every consumer validates the depot', async () => {
    const fx = await fixture();
    const before = depotUpdates(fx);
    const report = await moveDepotCa(serveMoveOptions(fx, newPair()));
    expect(report.phases.map((p) => [p.phase, p.ok])).toEqual(['plan', 'import', 'prove', 'switch', 'revalidate'].map((p) => [p, true]));
    const switched = report.phases.find((p) => p.phase === 'switch')!;
    expect(switched.findings?.map((f) => f.id)).toEqual([]);
    expect(report.ok).toBe(true);
    // check, given the new CA, agrees about the depot as it is served now.
    const checked = await checkDepot(fx.addressUrl, { caPems: [await readFile(newPair().newCa, 'utf8')], timeoutMs: 10_000 });
    expect(checked.findings.filter((f) => f.severity === 'error' && /^(tls|cert)\./.test(f.id))).toEqual([]);
    expect(report.phases.find((p) => p.phase === 'revalidate')!.rows!.every((r) => r.ok)).toBe(true);
    expect(depotUpdates(fx).map((n, i) => n - before[i]!)).toEqual([1, 1]);
  }, 120_000);

  it("a server that sends the leaf without its intermediate: the switch fails with check's id, and no consumer is asked to validate the depot", async () => {
    const fx = await fixture();
    // A site whose server sends the first certificate of its file only: the move writes site-chain.pem and the key,
    // and the reload hands serve the leaf alone.
    const siteChain = join(fx.dir, 'site-chain.pem');
    await writeFile(siteChain, await readFile(fx.files.served.cert));
    const reloadCommand = `sed '/-END CERTIFICATE-/q' '${siteChain}' > '${fx.files.served.cert}' && kill -HUP ${fx.serve.info.pid}`;
    const opts: CaMoveOptions = serveMoveOptions(fx, {
      ...newPair(),
      served: { kind: 'site', certFile: siteChain, keyFile: fx.files.served.key, reloadCommand },
      trustSettleMs: 0,
    });
    const before = depotUpdates(fx);
    const report = await moveDepotCa(opts);
    expect(report.ok).toBe(false);
    expect(report.phases.map((p) => [p.phase, p.ok])).toEqual([
      ['plan', true],
      ['import', true],
      ['prove', true],
      ['switch', false],
    ]);
    // The new leaf is served, without the intermediate: check's verdict on it, with check's id.
    expect(await servedLeafSha256(fx.addressUrl, 5000)).toBe(report.plan.leaf.sha256);
    const switched = report.phases.find((p) => p.phase === 'switch')!;
    const ids = switched.findings!.filter((f) => f.severity === 'error').map((f) => f.id);
    expect(ids).toEqual(['cert.chain.untrusted']);
    const checked = await checkDepot(fx.addressUrl, { caPems: [await readFile(newPair().newCa, 'utf8')], timeoutMs: 10_000 });
    expect(checked.findings.map((f) => f.id)).toContain('cert.chain.untrusted');
    expect(switched.note).toMatch(/check rejects the chain served \(cert\.chain\.untrusted\)/);
    expect(report.next).toMatch(
      /no consumer was asked to validate it\. The server sends 1 certificate\(s\), not the 2 of .*site-chain\.pem: have it send that file whole/,
    );
    expect(depotUpdates(fx)).toEqual(before);
    // Not marked switched: a re-run judges the served chain again, and stops again while the server sends the leaf alone.
    const state = JSON.parse(await readFile(report.plan.stateFile, 'utf8')) as { switched?: string; revalidated: string[] };
    expect([state.switched, state.revalidated]).toEqual([undefined, []]);
    // The re-run by the built command line: its text report names check's id under the switch, and what to fix.
    const inventory = join(fx.dir, 'consumers.yaml');
    const entries = fx.targets.map((t) => `  - { name: ${t.name}, url: "${t.url}", passwordEnv: ${PASSWORD_ENV}, insecure: true }`);
    await writeFile(inventory, `installers:\n${entries.join('\n')}\n`);
    const pair = newPair();
    const again = await runCli(
      [
        ...['depot', 'move-ca', '--cert', pair.newCert, '--key', pair.newKey, '--new-ca', pair.newCa, '--trust-settle', '0'],
        ...['--served-cert', siteChain, '--served-key', fx.files.served.key, '--reload-command', reloadCommand, '--inventory', inventory],
        ...['--depot-url', fx.depotUrl, '--depot-user', DEPOT_USER, '--depot-password-env', DEPOT_PASSWORD_ENV],
      ],
      { env: { [DEPOT_PASSWORD_ENV]: DEPOT_PASSWORD } },
    );
    expect(again.code, again.stderr).toBe(1);
    expect(again.stdout).toMatch(
      /^switch: FAILED \(served, but check rejects the chain served \(cert\.chain\.untrusted\)\)\n {2}ERROR cert\.chain\.untrusted: /m,
    );
    expect(again.stdout).toMatch(/^Stopped\. The depot serves the new certificate with a chain check rejects; .* have it send that file whole/m);
    expect(depotUpdates(fx)).toEqual(before);
  }, 120_000);
});
