import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DepotkitError } from '../../src/util/errors.js';
import type { ExportTarget } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { createCa, issueServerCert, type CaMaterial } from '../../src/cert/index.js';
import { moveDepotCa, servedLeafSha256, type CaMoveOptions, type CaMoveReport } from '../../src/procedures/index.js';
import type { InstallerSimulator } from '../../src/simulators/installer/index.js';
import type { InstallerTarget } from '../../src/installer/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { run, type RunningServer } from '../export/helpers.js';
import { freePort } from '../helpers/ports.js';
import { DEPOT_PASSWORD, DEPOT_USER } from '../installer/helpers.js';
import { depotSpec, holds, startConsumers, trustAndPoint, validateContinuously, type ValidationTally } from './ca-move-fixture.js';
import { until } from '../helpers/poll.js';

/** Consumers validating the depot every 200 ms through each move. */
const CONSUMERS = 6;

/** An exported site's kind, as the real server runs it. */
export interface SiteKind {
  server: Exclude<ExportTarget, 'systemd'>;
  /** The file of the export the server runs. */
  file: string;
  start(site: string, port: number, dir: string): Promise<RunningServer>;
  /** What in the server's log says it refused the configuration or a file. */
  refusals: RegExp;
  /** A failed validation that the server's reload causes on a host without a setting the export's steps give. */
  excused?: (failure: ValidationTally['failed'][number]) => boolean;
}

/** What the server and the consumers logged of a failure, for the message of a failed expectation. */
async function failureLogs(site: Site): Promise<string> {
  const consumers = site.sims.flatMap((sim, i) => (sim?.logs ?? []).filter((line) => line.includes('ERROR')).map((line) => `consumer-${i}: ${line}`));
  return `${await site.server.log()}\n${consumers.join('\n')}`;
}

/** The failed validations but those excused on this host. */
function unexcused(kind: SiteKind, tally: ValidationTally): ValidationTally['failed'] {
  return tally.failed.filter((f) => !kind.excused?.(f));
}

/** A served pair, a pair to move to and the CAs, in `dir`. */
function pairFiles(dir: string) {
  return {
    // In a folder of its own, 0700 as `cert issue` makes it: the export's steps open it to a server that reads as its own user.
    cert: join(dir, 'tls', 'served-chain.pem'),
    key: join(dir, 'tls', 'served-key.pem'),
    newCert: join(dir, 'new-chain.pem'),
    newKey: join(dir, 'new-key.pem'),
    newCa: join(dir, 'new-ca.pem'),
    oldCa: join(dir, 'old-ca.pem'),
    password: join(dir, 'depot-password'),
  };
}

/**
 * The steps of the export's next steps that give the server's group the files and folders it reads (`sudo chgrp ...`),
 * run as they are printed but for sudo: as root only, where the servers drop to their own users.
 */
async function groupSteps(stdout: string): Promise<void> {
  if (process.getuid?.() !== 0) return;
  for (const [, command] of stdout.matchAll(/^\s*\d+\. sudo (chgrp .*?)\s+#/gm)) await run('/bin/sh', ['-c', command!.replace(/\bsudo /g, '')]);
}

/**
 * A depot exported with `depotkit export <server>` and run by the real server on the old CA's certificate,
 * and consumers that trust the old CA and validated the depot. Registers its own beforeAll and afterAll:
 * call it inside the describe.
 */
function exportedSite(kind: SiteKind) {
  const site = {} as {
    dir: string;
    server: RunningServer;
    /** The export's next steps, sudo taken out. */
    steps: string[];
    depotUrl: string;
    sims: Array<InstallerSimulator | undefined>;
    targets: InstallerTarget[];
    oldCa: CaMaterial;
    newCa: CaMaterial;
    cleanup: () => Promise<void>;
  };
  beforeAll(async () => {
    const tmp = await tempDir(`depotkit-ca-move-${kind.server}-`);
    site.dir = tmp.dir;
    site.cleanup = tmp.cleanup;
    // The server's workers (www-data, caddy when the tests run as root) read the depot and the pair through this folder.
    await chmod(tmp.dir, 0o755);
    const f = pairFiles(tmp.dir);
    await mkdir(dirname(f.key), { mode: 0o700 });
    [site.oldCa, site.newCa] = await Promise.all([createCa({ cn: 'Old Depot CA', keySize: 2048 }), createCa({ cn: 'New Depot CA', keySize: 2048 })]);
    const names = { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 as const };
    const [oldLeaf, newLeaf] = await Promise.all([issueServerCert(site.oldCa, names), issueServerCert(site.newCa, names)]);
    await Promise.all([
      writeFile(f.cert, oldLeaf.chainPem),
      writeFile(f.key, oldLeaf.keyPem, { mode: 0o600 }),
      writeFile(f.newCert, newLeaf.chainPem),
      writeFile(f.newKey, newLeaf.keyPem, { mode: 0o600 }),
      writeFile(f.newCa, site.newCa.certPem),
      writeFile(f.oldCa, site.oldCa.certPem),
      writeFile(f.password, `${DEPOT_PASSWORD}\n`, { mode: 0o600 }),
    ]);
    const root = join(tmp.dir, 'depot');
    await makeDemoDepot(root, { binarySize: 16 });
    const port = await freePort();
    const out = join(tmp.dir, kind.server);
    const where = ['--out', out, '--host', '127.0.0.1', '--port', String(port)];
    const exported = await runCli([
      'export',
      kind.server,
      root,
      ...where,
      '--cert',
      f.cert,
      '--key',
      f.key,
      '--user',
      DEPOT_USER,
      '--password-file',
      f.password,
    ]);
    expect(exported.code, exported.stderr).toBe(0);
    site.steps = exported.stdout
      .split('\n')
      .filter((l) => /^\s*\d+\. /.test(l))
      .map((l) => l.replace(/^\s*\d+\. /, '').replace(/\bsudo /g, ''));
    await groupSteps(exported.stdout);
    const runDir = join(out, 'run');
    await mkdir(runDir);
    site.server = await kind.start(join(out, kind.file), port, runDir);
    site.depotUrl = `https://127.0.0.1:${port}`;
    ({ sims: site.sims, targets: site.targets } = await startConsumers(undefined, CONSUMERS));
    await trustAndPoint(site.sims, site.oldCa.certPem, site.depotUrl);
  }, 120_000);
  afterAll(async () => {
    await site.server?.stop();
    await Promise.all((site.sims ?? []).map((s) => s?.close()));
    await site.cleanup?.();
  });
  return site;
}

type Site = ReturnType<typeof exportedSite>;

function moveOptions(site: Site, extra: Partial<CaMoveOptions> = {}): CaMoveOptions {
  const f = pairFiles(site.dir);
  return {
    newCert: f.newCert,
    newKey: f.newKey,
    newCa: f.newCa,
    oldCa: f.oldCa,
    served: { kind: 'site', certFile: f.cert, keyFile: f.key, reloadCommand: site.server.reloadCommand },
    depot: depotSpec(site.depotUrl),
    consumers: site.targets,
    concurrency: 4,
    timeoutMs: 30_000,
    ...extra,
  };
}

/**
 * The move's wait after the proof, for validations begun before the consumers trusted the new CA: twice
 * the longest the consumers took so far (at least a second), not the library's 5 s.
 */
function trustSettleMs(tally: ValidationTally): number {
  return Math.max(1_000, 2 * (tally.longestMs ?? 0));
}

/** Resolves once every consumer validated `more` times since `from` (a copy of the per-consumer counts). */
async function validatedSince(tally: ValidationTally, from: number[], more = 1): Promise<void> {
  // Bounded by the test's timeout: a validation waits on the consumers' own pace.
  await until(() => tally.perConsumer.every((n, i) => n >= from[i]! + more), 'every consumer to validate again', { timeoutMs: 60_000, everyMs: 50 });
}

/**
 * The move with the site's reload command, every consumer validating before, during and after: zero
 * failures, the real server serving the new certificate, and the consumers trusting the new CA only.
 */
async function moveWithReload(site: Site, kind: SiteKind): Promise<void> {
  let done!: () => void;
  const stop = new Promise<void>((r) => (done = r));
  const tally: ValidationTally = { ok: 0, failed: [], perConsumer: site.sims.map(() => 0) };
  const validating = validateContinuously({ sims: site.sims, depotUrl: site.depotUrl }, stop, tally);
  let report: CaMoveReport;
  let before: number[];
  let during: number[];
  try {
    await validatedSince(tally, tally.perConsumer.slice());
    before = tally.perConsumer.slice();
    report = await moveDepotCa(moveOptions(site, { removeOld: true, trustSettleMs: trustSettleMs(tally) }));
    during = tally.perConsumer.slice();
    await validatedSince(tally, during, 2);
  } finally {
    // Also when the move throws: the consumers stop validating before they are closed.
    done();
    await validating.catch(() => undefined);
  }
  await validating;
  expect(unexcused(kind, tally), await failureLogs(site)).toEqual([]);
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
  // The real server itself serves the new certificate, and the consumers trust the new CA only.
  expect(await servedLeafSha256(site.depotUrl, 5000)).toBe(report.plan.leaf.sha256);
  for (const sim of site.sims) {
    expect(await holds(sim!, site.newCa.certPem)).toBe(true);
    expect(await holds(sim!, site.oldCa.certPem)).toBe(false);
  }
  expect(await site.server.log()).not.toMatch(kind.refusals);
}

/** A pair from a CA of its own, with that CA, in a folder `name` of the site's. */
async function anotherPair(site: Site, name: string): Promise<{ newCert: string; newKey: string; newCa: string }> {
  const ca = await createCa({ cn: `${name} Depot CA`, keySize: 2048 });
  const leaf = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  const dir = join(site.dir, name);
  await mkdir(dir);
  const paths = { newCert: join(dir, 'chain.pem'), newKey: join(dir, 'key.pem'), newCa: join(dir, 'ca.pem') };
  await Promise.all([writeFile(paths.newCert, leaf.chainPem), writeFile(paths.newKey, leaf.keyPem, { mode: 0o600 }), writeFile(paths.newCa, ca.certPem)]);
  return paths;
}

/**
 * The move to a key the server cannot read (its served key made 0600, which the move keeps, while the
 * server reads as its own user through the key's group): the reload fails, the move stops with the server's
 * own reason and the old certificate stays served; the key given back to the group, the same move
 * completes. No validation fails throughout.
 */
export async function moveRefusedThenCompleted(site: Site, kind: SiteKind): Promise<void> {
  const paths = await anotherPair(site, 'refused');
  const f = pairFiles(site.dir);
  // The first run's reload fails, the old certificate still served; the second switches long after the
  // validations begun before the first run's import ended.
  const opts = moveOptions(site, { ...paths, oldCa: f.newCa, trustSettleMs: 1_000 });
  const before = await servedLeafSha256(site.depotUrl, 5000);
  let done!: () => void;
  const stop = new Promise<void>((r) => (done = r));
  const tallying = validateContinuously({ sims: site.sims, depotUrl: site.depotUrl }, stop);
  let refused: unknown;
  let completed: CaMoveReport;
  try {
    await chmod(f.key, 0o600);
    refused = await moveDepotCa(opts).catch((err: unknown) => err);
    expect(await servedLeafSha256(site.depotUrl, 5000)).toBe(before);
    await chmod(f.key, 0o640);
    completed = await moveDepotCa(opts);
  } finally {
    done();
    await tallying.catch(() => undefined);
  }
  const tally = await tallying;
  expect(unexcused(kind, tally), await failureLogs(site)).toEqual([]);
  expect(refused).toBeInstanceOf(DepotkitError);
  expect((refused as Error).message).toMatch(/^The reload command ".*" failed: Error: .*permission denied/);
  expect(completed.ok).toBe(true);
  expect(completed.resumed).toBe(true);
  expect(completed.phases.find((p) => p.phase === 'switch')).toMatchObject({ ok: true, note: 'switched' });
  expect(await servedLeafSha256(site.depotUrl, 5000)).toBe(completed.plan.leaf.sha256);
}

/**
 * The move without a reload command, on to a third CA: it writes the pair and stops naming the reload of
 * the site's kind, which is the one the export's next steps give; the server reloaded by hand, the same
 * move carries on and completes, with zero failed validations throughout.
 */
async function moveReloadedByHand(site: Site, kind: SiteKind): Promise<void> {
  const paths = await anotherPair(site, 'third');
  const f = pairFiles(site.dir);
  const opts = moveOptions(site, { ...paths, oldCa: f.newCa, served: { kind: 'site', certFile: f.cert, keyFile: f.key, server: kind.server } });
  let done!: () => void;
  const stop = new Promise<void>((r) => (done = r));
  const tally: ValidationTally = { ok: 0, failed: [], perConsumer: site.sims.map(() => 0) };
  const tallying = validateContinuously({ sims: site.sims, depotUrl: site.depotUrl }, stop, tally);
  let first: CaMoveReport;
  let second: CaMoveReport;
  try {
    first = await moveDepotCa(opts);
    // Still the previous certificate: the server has not been told.
    expect(await servedLeafSha256(site.depotUrl, 5000)).not.toBe(first.plan.leaf.sha256);
    // A person reloads a while after the stop: by then no validation is under way that began before the import.
    await validatedSince(tally, tally.perConsumer.slice(), 2);
    await run('/bin/sh', ['-c', site.server.reloadCommand]);
    second = await moveDepotCa(opts);
  } finally {
    done();
    await tallying.catch(() => undefined);
  }
  await tallying;
  expect(unexcused(kind, tally), await failureLogs(site)).toEqual([]);
  expect(first.ok).toBe(false);
  expect(first.phases.map((p) => [p.phase, p.ok, p.note])).toEqual([
    ['plan', true, undefined],
    ['import', true, undefined],
    ['prove', true, undefined],
    ['switch', false, 'reload-needed'],
  ]);
  expect(first.reload).toHaveLength(1);
  expect(first.reload![0]!.server).toBe(kind.server);
  // The reload named is the export's own last step before the check.
  expect(site.steps).toContain(first.reload![0]!.command);
  expect(first.next).toContain(first.reload![0]!.command);
  expect(second.ok).toBe(true);
  expect(second.resumed).toBe(true);
  expect(second.phases.find((p) => p.phase === 'switch')).toMatchObject({ ok: true, note: 'already-served' });
  expect(await servedLeafSha256(site.depotUrl, 5000)).toBe(second.plan.leaf.sha256);
}

/**
 * Registers, inside the describe, `kind`'s exported site and the two moves every site passes: with its reload
 * (`reload` names it in the test's name) and with a reload by hand. Returns the site, for tests of its own.
 */
export function siteMoveTests(kind: SiteKind, reload = 'its reload'): Site {
  const site = exportedSite(kind);
  it(`writes the new pair over the files the site reads, runs ${reload}, and every consumer validates before, during and after with zero failures`, async () => {
    await moveWithReload(site, kind);
  }, 120_000);
  it('without a reload command, writes the pair and stops naming the reload the export gives; after it, the same move carries on and completes', async () => {
    await moveReloadedByHand(site, kind);
  }, 120_000);
  return site;
}
