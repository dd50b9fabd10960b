import { copyFile, cp, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatBuildReport } from '../../src/cli/depot.js';
import { formatMirrorReport } from '../../src/cli/transfer-mirror.js';
import { formatUnpackReport } from '../../src/cli/transfer-unpack.js';
import { DEPOT_PATHS } from '../../src/constants.js';
import { buildDepot } from '../../src/depot/build.js';
import { verifyDepot } from '../../src/depot/verify.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { startDepotServer } from '../../src/server/index.js';
import type { PackManifest } from '../../src/transfer/format.js';
import { type MirrorOptions, type MirrorReport, mirrorDepot } from '../../src/transfer/mirror.js';
import { packDepot } from '../../src/transfer/pack.js';
import { DepotkitError, EXIT } from '../../src/util/errors.js';
import { type UnpackReport, unpackDepot } from '../../src/transfer/unpack.js';
import { useTempDir } from '../helpers/temp.js';
import { demo } from './helpers.js';
import { type AddedBinary, addRelease, firstReleaseBinaries } from './releases-fixture.js';

// Selective packs unpacked one after another into one depot, and metadata that moves forward: the library in-process.
const BINARY = 4096;
const VOLUME = 1024 ** 3;

const tmp = useTempDir('depotkit-merge-');
/** 9.0.0.0 (GA), 9.0.1.0 (new VCENTER and NSX_T_MANAGER builds), 9.0.2.0 (new VCENTER, ESX_HOST, SDDC_MANAGER_VCF builds). */
let depot: string;
/** The same depot before 9.0.1.0 and 9.0.2.0: the GA release alone. */
let ga: string;
let gaBinaries: AddedBinary[];
const added = new Map<string, AddedBinary[]>();
/** What the server serves: a copy of one depot or another, swapped between mirrors. */
let served: string;
let url: string;
let caPem: string;
let stop: () => Promise<void>;
const fresh = tmp.fresh;

beforeAll(async () => {
  ga = await demo(join(tmp.dir, 'ga'), BINARY);
  gaBinaries = await firstReleaseBinaries(ga);
  depot = join(tmp.dir, 'depot');
  await cp(ga, depot, { recursive: true });
  added.set('9.0.1.0', await addRelease(depot, '9.0.1.0', ['VCENTER', 'NSX_T_MANAGER'], [3000, 5000]));
  added.set('9.0.2.0', await addRelease(depot, '9.0.2.0', ['VCENTER', 'ESX_HOST', 'SDDC_MANAGER_VCF'], [7000, 11000, 13000]));
  served = join(tmp.dir, 'served');
  await cp(depot, served, { recursive: true });
  const ca = await createCa({ keySize: 2048 });
  const issued = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  caPem = ca.certPem;
  const server = await startDepotServer({ root: served, host: '127.0.0.1', port: 0, tls: { certPem: issued.chainPem, keyPem: issued.keyPem } });
  url = server.url.replace('127.0.0.1', 'localhost');
  stop = () => server.close();
});
afterAll(async () => {
  await stop?.();
});

/** The server now serves `root`'s files (those it lacks stay, as stale files do on a real server). */
async function serve(root: string): Promise<void> {
  await cp(root, served, { recursive: true, force: true });
}

const mirror = (out: string, extra: Partial<MirrorOptions> = {}) => mirrorDepot({ url, out, caPems: [caPem], ...extra });
const completeOf = (r: MirrorReport) => Object.fromEntries(r.releases.map((s) => [s.version, s.complete]));

const paths = (list: { path: string }[]) => list.map((b) => b.path).sort();
const complete = (r: UnpackReport) => Object.fromEntries(r.releases.map((s) => [s.version, s.complete]));

/** What a release needs: its new builds and the GA builds of the components it did not rebuild. */
function needs(release: string): string[] {
  const own = added.get(release)!;
  const rebuilt = new Set(own.map((b) => b.path.split('/')[2]));
  return paths([...own, ...gaBinaries.filter((b) => !rebuilt.has(b.path.split('/')[2]))]);
}

async function packOf(root: string, releases: string[]) {
  return packDepot({ depot: root, out: fresh('pack'), volumeSize: VOLUME, select: { releases } });
}

describe('a selective pack unpacks clean', () => {
  it('records its choice; the release chosen is complete with the GA builds its manifest keeps, and what it left out is said once, not failed', async () => {
    const pack = await packOf(depot, ['9.0.1']);
    const manifest = JSON.parse(await readFile(pack.manifest, 'utf8')) as PackManifest;
    expect(manifest.selection).toMatchObject({ releases: ['9.0.1.0'], components: [], chosen: { binaries: needs('9.0.1.0').length } });
    expect(paths(manifest.files.filter((f) => f.kind === 'binary'))).toEqual(needs('9.0.1.0'));

    const report = await unpackDepot({ media: [pack.out], out: fresh('depot') });
    expect(report.failed).toEqual([]);
    expect(report.verify.ok).toBe(true);
    expect(report.ok).toBe(true);
    const leftOut = 2 + 3; // the GA VCENTER and NSX_T_MANAGER builds 9.0.1.0 replaced, and 9.0.2.0's three
    expect(report.selection).toMatchObject({ releases: ['9.0.1.0'], leftOut: { binaries: leftOut } });
    expect(complete(report)['9.0.1.0']).toBe(true);
    // The release lines are verify's verdicts: the releases not chosen are metadata only (cut out), not half present.
    const verdicts = (await verifyDepot(report.out)).releases;
    expect(report.releases.map((r) => [r.version, r.state, r.present, r.binaries])).toEqual(
      verdicts.map((v) => [v.version, v.state, v.counts.present, v.counts.binaries]),
    );
    expect(report.releases.map((r) => [r.version, r.state])).toEqual([
      ['9.0.0.0', 'metadata-only'],
      ['9.0.1.0', 'complete'],
      ['9.0.2.0', 'metadata-only'],
    ]);
    const lines = formatUnpackReport(report);
    expect(lines).toContain(`${leftOut} binaries of releases not in this pack left out (selected: 9.0.1.0).`);
    // One wording: the transfer prints the verdict verify gives.
    expect(lines).toContain(`Release 9.0.1.0 is complete: all ${needs('9.0.1.0').length} binaries are here with their bytes.`);
    expect(lines).toContain(verdicts[2]!.message);
    expect(lines.join('\n')).not.toMatch(/Release 9\.0\.2\.0: \d+\/\d+ binaries present/);
    expect(lines.join('\n')).not.toMatch(/FAILED|INCOMPLETE|ERROR/);
    expect(lines.find((l) => l.startsWith('OK: '))).toMatch(/^OK: .* holds every binary this pack chose/);
  });

  it('a pack of a second release unpacked onto the first leaves the first complete and adds only what the first lacked', async () => {
    const out = fresh('depot');
    expect((await unpackDepot({ media: [(await packOf(depot, ['9.0.1.0'])).out], out })).ok).toBe(true);
    const second = await unpackDepot({ media: [(await packOf(depot, ['9.0.2.0'])).out], out });
    expect(second.ok).toBe(true);
    expect(second.failed).toEqual([]);
    const first = new Set(needs('9.0.1.0'));
    const named = new Set(paths([...gaBinaries, ...[...added.values()].flat()]));
    const binaries = (list: { path: string }[]) => paths(list).filter((p) => named.has(p));
    expect(binaries(second.placed)).toEqual(needs('9.0.2.0').filter((p) => !first.has(p)));
    expect(binaries(second.alreadyInPlace)).toEqual(needs('9.0.2.0').filter((p) => first.has(p)));
    expect(complete(second)).toMatchObject({ '9.0.1.0': true, '9.0.2.0': true });
    // Left out: only what neither pack brought (the GA VCENTER build); the first release's builds are here.
    const absent = [...gaBinaries, ...[...added.values()].flat()].filter((b) => !first.has(b.path) && !needs('9.0.2.0').includes(b.path));
    expect(absent.map((b) => b.path)).toEqual([gaBinaries.find((b) => b.path.includes('/VCENTER/'))!.path]);
    expect(second.selection).toMatchObject({ leftOut: { binaries: 1, bytes: absent[0]!.size } });
    expect(formatUnpackReport(second)).toContain('1 binary of releases not in this pack left out (selected: 9.0.2.0).');
    // The same catalog both times: nothing of the metadata changed, nothing was backed up.
    expect(second.metadataChange).toBeUndefined();
  });
  it("a left-out build holding another build's bytes is said as the verdict verify gives (wrong binaries), not as missing", async () => {
    const out = fresh('depot');
    const pack = await packOf(depot, ['9.0.1.0']);
    expect((await unpackDepot({ media: [pack.out], out })).ok).toBe(true);
    const gaVcenter = gaBinaries.find((b) => b.path.includes('/VCENTER/'))!;
    const newer = added.get('9.0.1.0')!.find((b) => b.path.includes('/VCENTER/'))!;
    await copyFile(join(out, newer.path), join(out, gaVcenter.path));

    const again = await unpackDepot({ media: [pack.out], out });
    const ga = again.releases.find((r) => r.version === '9.0.0.0')!;
    const verdict = (await verifyDepot(out)).releases.find((r) => r.version === '9.0.0.0')!;
    expect(verdict.state).toBe('wrong-binaries');
    expect(ga).toMatchObject({ state: 'wrong-binaries', complete: false, message: verdict.message });
    // Not here with its bytes: the other build, and the GA NSX_T_MANAGER build 9.0.1.0 replaced (left out).
    const gaNsx = gaBinaries.find((b) => b.path.includes('/NSX_T_MANAGER/'))!;
    expect([...ga.missing].sort()).toEqual([gaNsx.path, gaVcenter.path].sort());
    expect(formatUnpackReport(again)).toContain(verdict.message);
    // It is here (with the wrong bytes, which verify says): not counted as left out.
    expect(again.selection).toMatchObject({ leftOut: { binaries: 4 } });
    expect(again.ok).toBe(false);
  });
});

describe('one release plan names the releases', () => {
  it("a pack records the releases verify names: a manifest that lists none names none (not the catalog's versions)", async () => {
    const dir = fresh('none');
    await cp(ga, dir, { recursive: true });
    const manifest = JSON.parse(await readFile(join(dir, DEPOT_PATHS.manifest), 'utf8')) as Record<string, unknown>;
    await writeFile(join(dir, DEPOT_PATHS.manifest), JSON.stringify({ ...manifest, releases: [] }));
    const pack = await packDepot({ depot: dir, out: fresh('pack'), volumeSize: VOLUME });
    const recorded = (JSON.parse(await readFile(pack.manifest, 'utf8')) as PackManifest).source.releases;
    expect(recorded).toEqual((await verifyDepot(dir)).releases.map((r) => r.version));
    expect(recorded).toEqual([]);
  });
});

describe('metadata only moves forward', () => {
  it('unpack of a newer release onto an older depot goes in without force, keeps the old metadata and names the release added', async () => {
    const out = fresh('depot');
    await cp(ga, out, { recursive: true });
    const oldCatalog = await readFile(join(out, DEPOT_PATHS.catalog));
    const report = await unpackDepot({ media: [(await packDepot({ depot, out: fresh('pack'), volumeSize: VOLUME })).out], out });
    expect(report.ok).toBe(true);
    expect(report.metadata).toBe('placed');
    expect(report.metadataChange?.releases).toEqual({ added: ['9.0.1.0', '9.0.2.0'], removed: [] });
    expect(report.metadataChange?.added).toHaveLength(5);
    const backup = report.metadataChange!.backup!;
    expect((await readFile(join(backup, DEPOT_PATHS.catalog))).equals(oldCatalog)).toBe(true);
    expect(formatUnpackReport(report)).toContain(
      `Metadata changed: releases added 9.0.1.0, 9.0.2.0, removed none; 5 product versions added, 0 removed. The replaced metadata is kept in ${backup}.`,
    );
  });

  it('depot build of newer metadata into an older depot goes in without force, keeps the old metadata and names the release added', async () => {
    const out = fresh('depot');
    await cp(ga, out, { recursive: true });
    const oldCatalog = await readFile(join(out, DEPOT_PATHS.catalog));
    const report = await buildDepot({ metadata: depot, binaries: [depot], out });
    expect(report.verify.ok).toBe(true);
    expect(report.metadataChange?.releases).toEqual({ added: ['9.0.1.0', '9.0.2.0'], removed: [] });
    const backup = report.metadataChange!.backup!;
    expect(backup).toBeDefined();
    expect((await readFile(join(backup, DEPOT_PATHS.catalog))).equals(oldCatalog)).toBe(true);
    expect(await readdir(join(out, '.depotkit', 'metadata-backup'))).toHaveLength(1);
    expect(formatBuildReport(report)).toContain(
      `Metadata changed: releases added 9.0.1.0, 9.0.2.0, removed none; 5 product versions added, 0 removed. The replaced metadata is kept in ${backup}.`,
    );
  });
});

describe('mirror merges releases and never moves metadata backwards', () => {
  it('a mirror of one release, then of another, leaves both complete', async () => {
    await serve(depot);
    const out = fresh('mirror');
    const totals: number[] = [];
    const first = await mirror(out, { select: { releases: ['9.0.1.0'] }, onStart: (total) => totals.push(total) });
    expect(first.ok).toBe(true);
    expect(paths(first.downloaded)).toEqual(needs('9.0.1.0'));
    // The progress bar's total is every byte to download (the lookups at once once lost each other's sums).
    expect(totals).toEqual([first.bytesDownloaded]);
    expect(completeOf(first)['9.0.1.0']).toBe(true);
    const second = await mirror(out, { select: { releases: ['9.0.2.0'] } });
    expect(second.ok).toBe(true);
    const had = new Set(needs('9.0.1.0'));
    expect(paths(second.downloaded)).toEqual(needs('9.0.2.0').filter((p) => !had.has(p)));
    expect(completeOf(second)).toMatchObject({ '9.0.1.0': true, '9.0.2.0': true });
    // Left out: only what neither mirror fetched (the GA VCENTER build); the first release's builds are here.
    const gaVcenter = gaBinaries.find((b) => b.path.includes('/VCENTER/'))!;
    expect(second.selection).toMatchObject({ leftOut: { binaries: 1, bytes: gaVcenter.size } });
    expect(second.releases.find((r) => r.version === '9.0.0.0')).toMatchObject({ state: 'metadata-only', missing: [gaVcenter.path] });
    expect(second.metadataChange).toBeUndefined();
  });

  it('newer metadata goes in without force and is reported; older is refused before anything is written unless forced, and then the newer is kept', async () => {
    await serve(ga);
    const out = fresh('mirror');
    expect((await mirror(out)).ok).toBe(true);
    const gaCatalog = await readFile(join(out, DEPOT_PATHS.catalog));

    await serve(depot);
    const newer = await mirror(out);
    expect(newer.ok).toBe(true);
    expect(newer.metadataChange?.releases).toEqual({ added: ['9.0.1.0', '9.0.2.0'], removed: [] });
    const kept = newer.metadataChange!.backup!;
    expect((await readFile(join(kept, DEPOT_PATHS.catalog))).equals(gaCatalog)).toBe(true);
    expect(formatMirrorReport(newer)).toContain(
      `Metadata changed: releases added 9.0.1.0, 9.0.2.0, removed none; 5 product versions added, 0 removed. The replaced metadata is kept in ${kept}.`,
    );
    const newCatalog = await readFile(join(out, DEPOT_PATHS.catalog));

    await serve(ga);
    const refused = await mirror(out).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(DepotkitError);
    expect((refused as DepotkitError).exitCode).toBe(EXIT.usage);
    expect((refused as DepotkitError).message).toMatch(/older than the one in .*: mirrored, it would move the depot's metadata backwards/);
    expect((await readFile(join(out, DEPOT_PATHS.catalog))).equals(newCatalog)).toBe(true);
    expect(await readdir(join(out, '.depotkit', 'metadata-backup'))).toHaveLength(1);

    const forced = await mirror(out, { force: true });
    expect(forced.metadataChange?.releases).toEqual({ added: [], removed: ['9.0.1.0', '9.0.2.0'] });
    expect((await readFile(join(forced.metadataChange!.backup!, DEPOT_PATHS.catalog))).equals(newCatalog)).toBe(true);
    expect((await readFile(join(out, DEPOT_PATHS.catalog))).equals(gaCatalog)).toBe(true);
  });
});
