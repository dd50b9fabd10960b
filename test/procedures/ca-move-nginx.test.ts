import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { createCa, issueServerCert, type CaMaterial } from '../../src/pki/index.js';
import { moveDepotCa, servedLeafSha256, type CaMoveOptions, type CaMoveReport } from '../../src/procedures/index.js';
import type { InstallerSimulator } from '../../src/simulators/installer/index.js';
import type { InstallerTarget } from '../../src/installer/index.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { NGINX, freePort, run, startNginxSite, type RunningServer } from '../export/helpers.js';
import { DEPOT_PASSWORD, DEPOT_USER } from '../installer/helpers.js';
import { depotSpec, holds, startConsumers, trustAndPoint, validateContinuously, type ValidationTally } from './ca-move-fixture.js';

const CONSUMERS = 6;

/**
 * The exported nginx site path of the CA move: `depotkit export nginx` writes a site that reads
 * the certificate and key where they are; the move writes the new pair over those files and runs
 * nginx's own reload, while every consumer keeps validating the depot.
 */
describe.skipIf(!NGINX)('moving an exported nginx site to another CA', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let nginx: RunningServer;
  let reloadCommand: string;
  let depotUrl: string;
  let sims: Array<InstallerSimulator | undefined>;
  let targets: InstallerTarget[];
  let newCa: CaMaterial;
  let oldCa: CaMaterial;
  const files = (dir: string) => ({
    cert: join(dir, 'served-chain.pem'),
    key: join(dir, 'served-key.pem'),
    newCert: join(dir, 'new-chain.pem'),
    newKey: join(dir, 'new-key.pem'),
    newCa: join(dir, 'new-ca.pem'),
    oldCa: join(dir, 'old-ca.pem'),
    password: join(dir, 'depot-password'),
  });

  beforeAll(async () => {
    tmp = await tempDir('depotkit-ca-move-nginx-');
    // nginx's workers (www-data when the tests run as root) read the depot through this folder.
    await chmod(tmp.dir, 0o755);
    const f = files(tmp.dir);
    [oldCa, newCa] = await Promise.all([createCa({ cn: 'Old Depot CA', keySize: 2048 }), createCa({ cn: 'New Depot CA', keySize: 2048 })]);
    const names = { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 as const };
    const [oldLeaf, newLeaf] = await Promise.all([issueServerCert(oldCa, names), issueServerCert(newCa, names)]);
    await Promise.all([
      writeFile(f.cert, oldLeaf.chainPem),
      writeFile(f.key, oldLeaf.keyPem, { mode: 0o600 }),
      writeFile(f.newCert, newLeaf.chainPem),
      writeFile(f.newKey, newLeaf.keyPem, { mode: 0o600 }),
      writeFile(f.newCa, newCa.certPem),
      writeFile(f.oldCa, oldCa.certPem),
      writeFile(f.password, `${DEPOT_PASSWORD}\n`, { mode: 0o600 }),
    ]);
    const root = join(tmp.dir, 'depot');
    await makeDemoDepot(root, { binarySize: 16 });
    const port = await freePort();
    const site = join(tmp.dir, 'nginx');
    const where = ['--out', site, '--host', '127.0.0.1', '--port', String(port)];
    const exported = await runCli(['export', 'nginx', root, ...where, '--cert', f.cert, '--key', f.key, '--user', DEPOT_USER, '--password-file', f.password]);
    expect(exported.code, exported.stderr).toBe(0);
    const run = join(site, 'run');
    await mkdir(run);
    nginx = await startNginxSite(join(site, 'depotkit.conf'), port, run);
    // The same prefix, configuration and error log the test's nginx was started with.
    reloadCommand = `${NGINX} -p ${run} -e ${join(run, 'error.log')} -c ${join(run, 'nginx.conf')} -s reload`;
    depotUrl = `https://127.0.0.1:${port}`;
    ({ sims, targets } = await startConsumers(tmp.dir, CONSUMERS));
    await trustAndPoint(sims, oldCa.certPem, depotUrl);
  }, 120_000);
  afterAll(async () => {
    await nginx?.stop();
    await Promise.all((sims ?? []).map((s) => s?.close()));
    await tmp?.cleanup();
  });

  function options(extra: Partial<CaMoveOptions> = {}): CaMoveOptions {
    const f = files(tmp.dir);
    return {
      newCert: f.newCert,
      newKey: f.newKey,
      newCa: f.newCa,
      oldCa: f.oldCa,
      served: { kind: 'site', certFile: f.cert, keyFile: f.key, reloadCommand },
      depot: depotSpec(depotUrl),
      consumers: targets,
      concurrency: 4,
      timeoutMs: 30_000,
      ...extra,
    };
  }

  /** Resolves once every consumer validated `more` times since `from` (a copy of the per-consumer counts). */
  async function validatedSince(tally: ValidationTally, from: number[], more = 1): Promise<void> {
    while (!tally.perConsumer.every((n, i) => n >= from[i]! + more)) await new Promise((r) => setTimeout(r, 50));
  }

  it('writes the new pair over the files the site reads, runs its reload, and every consumer validates before, during and after with zero failures', async () => {
    let done!: () => void;
    const stop = new Promise<void>((r) => (done = r));
    const tally: ValidationTally = { ok: 0, failed: [], perConsumer: sims.map(() => 0) };
    const validating = validateContinuously({ sims, depotUrl }, stop, tally);
    let report: CaMoveReport;
    let before: number[];
    let during: number[];
    try {
      await validatedSince(tally, tally.perConsumer.slice());
      before = tally.perConsumer.slice();
      report = await moveDepotCa(options({ removeOld: true }));
      during = tally.perConsumer.slice();
      await validatedSince(tally, during, 2);
    } finally {
      done();
    }
    await validating;
    expect(tally.failed).toEqual([]);
    expect(before.every((n) => n >= 1)).toBe(true);
    expect(during.reduce((a, b) => a + b, 0)).toBeGreaterThan(before.reduce((a, b) => a + b, 0));
    expect(report.phases.map((p) => [p.phase, p.ok, p.note])).toEqual([
      ['plan', true, undefined],
      ['import', true, undefined],
      ['prove', true, undefined],
      ['switch', true, 'switched'],
      ['revalidate', true, undefined],
      ['retire', true, undefined],
    ]);
    expect(report.ok).toBe(true);
    // nginx itself serves the new certificate, and the consumers trust the new CA only.
    expect(await servedLeafSha256(depotUrl, 5000)).toBe(report.plan.leaf.sha256);
    for (const sim of sims) {
      expect(await holds(sim!, newCa.certPem)).toBe(true);
      expect(await holds(sim!, oldCa.certPem)).toBe(false);
    }
    expect(await nginx.log()).not.toMatch(/\[emerg\]|\[crit\]/);
  }, 120_000);

  it('without a reload command, writes the pair and stops for the reload; after it, the same move carries on and completes', async () => {
    const third = await createCa({ cn: 'Third Depot CA', keySize: 2048 });
    const leaf = await issueServerCert(third, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
    const dir = join(tmp.dir, 'third');
    await mkdir(dir);
    const paths = { newCert: join(dir, 'chain.pem'), newKey: join(dir, 'key.pem'), newCa: join(dir, 'ca.pem') };
    await Promise.all([writeFile(paths.newCert, leaf.chainPem), writeFile(paths.newKey, leaf.keyPem, { mode: 0o600 }), writeFile(paths.newCa, third.certPem)]);
    const f = files(tmp.dir);
    const opts = options({ ...paths, oldCa: f.newCa, served: { kind: 'site', certFile: f.cert, keyFile: f.key } });
    let done!: () => void;
    const stop = new Promise<void>((r) => (done = r));
    const tallying = validateContinuously({ sims, depotUrl }, stop);
    let first: CaMoveReport;
    let second: CaMoveReport;
    try {
      first = await moveDepotCa(opts);
      // Still the previous certificate: nginx has not been told.
      expect(await servedLeafSha256(depotUrl, 5000)).not.toBe(first.plan.leaf.sha256);
      await run('/bin/sh', ['-c', reloadCommand]);
      second = await moveDepotCa(opts);
    } finally {
      done();
    }
    const tally = await tallying;
    expect(tally.failed).toEqual([]);
    expect(first.ok).toBe(false);
    expect(first.phases.map((p) => [p.phase, p.ok, p.note])).toEqual([
      ['plan', true, undefined],
      ['import', true, undefined],
      ['prove', true, undefined],
      ['switch', false, 'reload-needed'],
    ]);
    expect(first.next).toMatch(/Reload the server/);
    expect(second.ok).toBe(true);
    expect(second.resumed).toBe(true);
    expect(second.phases.find((p) => p.phase === 'switch')).toMatchObject({ ok: true, note: 'already-served' });
    expect(await servedLeafSha256(depotUrl, 5000)).toBe(second.plan.leaf.sha256);
  }, 120_000);
});
