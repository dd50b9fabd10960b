import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { startDepotServer } from '../../src/server/index.js';
import type { PackManifest } from '../../src/transfer/format.js';
import { formatPackReport } from '../../src/cli/transfer-pack.js';
import { selectOptionsOf } from '../../src/cli/transfer-shared.js';
import { type MirrorReport, mirrorDepot } from '../../src/transfer/mirror.js';
import { type PackReport, packDepot } from '../../src/transfer/pack.js';
import type { SelectOptions } from '../../src/transfer/select.js';
import { DepotkitError, EXIT } from '../../src/util/errors.js';
import { formatBytes } from '../../src/util/progress.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { demo } from './helpers.js';
import { addRelease as addReleaseTo, firstReleaseBinaries } from './releases-fixture.js';

// One depot holding three releases (9.0.0.0 from depot demo, 9.0.1.0 and 9.0.2.0 added as patches), served by depotkit serve.
const BINARY = 8 * 1024;
const VOLUME = 1024 ** 3;
const USER = 'depot';
const PASSWORD = 'only what this site needs';

let base: string;
let cleanup: () => Promise<void>;
let depot: string;
let caFile: string;
let caPem: string;
let passwordFile: string;
let url: string;
let stop: () => Promise<void>;
/** The binaries each release added, by release. */
const added = new Map<string, { path: string; size: number }[]>();
let firstRelease: { path: string; size: number }[];
let n = 0;
const fresh = (name: string) => join(base, `${name}-${n++}`);

async function addRelease(root: string, release: string, components: string[], sizes: number[]): Promise<void> {
  added.set(release, await addReleaseTo(root, release, components, sizes));
}

const paths = (list: { path: string }[]) => list.map((b) => b.path).sort();
const bytesOf = (list: { size: number }[]) => list.reduce((sum, b) => sum + b.size, 0);

beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir('depotkit-select-'));
  depot = await demo(join(base, 'depot'), BINARY);
  firstRelease = await firstReleaseBinaries(depot);
  await addRelease(depot, '9.0.1.0', ['VCENTER', 'NSX_T_MANAGER'], [3000, 5000]);
  await addRelease(depot, '9.0.2.0', ['VCENTER', 'ESX_HOST', 'SDDC_MANAGER_VCF'], [7000, 11000, 13000]);
  const ca = await createCa({ keySize: 2048 });
  const issued = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  caFile = join(base, 'ca.pem');
  await writeFile(caFile, ca.certPem);
  caPem = ca.certPem;
  passwordFile = join(base, 'password');
  await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  const server = await startDepotServer({
    root: depot,
    host: '127.0.0.1',
    port: 0,
    tls: { certPem: issued.chainPem, keyPem: issued.keyPem },
    auth: { user: USER, password: PASSWORD },
  });
  url = server.url.replace('127.0.0.1', 'localhost');
  stop = () => server.close();
});
afterAll(async () => {
  await stop?.();
  await cleanup();
});

/** The library in-process: what the CLI adds (flags, exit codes, output) is tested with the built CLI below. */
async function mirror(out: string, select: SelectOptions = {}): Promise<MirrorReport> {
  return mirrorDepot({ url, out, caPems: [caPem], user: USER, password: PASSWORD, select });
}

async function cliMirror(out: string, extra: string[]) {
  return runCli(['depot', 'mirror', url, '--out', out, '--ca', caFile, '--user', USER, '--password-file', passwordFile, ...extra]);
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/** What a release needs: the builds it added and the GA builds of the components it did not rebuild (its manifest BOM). */
function needs(release: string): { path: string; size: number }[] {
  const own = added.get(release)!;
  const rebuilt = new Set(own.map((b) => b.path.split('/')[2]));
  return [...own, ...firstRelease.filter((b) => !rebuilt.has(b.path.split('/')[2]))];
}

const refusal = (run: Promise<unknown>) =>
  run.then(
    () => undefined,
    (err: unknown) => err as DepotkitError,
  );

describe('depot mirror of chosen releases', () => {
  it('downloads the binaries one release needs and no other, all metadata; a later mirror of a second adds only what it lacks and keeps the first', async () => {
    const out = fresh('mirror');
    const first = await mirror(out, { releases: ['9.0.1'] });
    expect(first.ok).toBe(true);
    const one = needs('9.0.1.0');
    expect(paths(first.downloaded)).toEqual(paths(one));
    expect(first.bytesDownloaded).toBe(bytesOf(one));
    expect(first.metadata.written).toEqual(expect.arrayContaining([DEPOT_PATHS.catalog, DEPOT_PATHS.manifest]));
    const leftOut = [...firstRelease, ...added.get('9.0.1.0')!, ...added.get('9.0.2.0')!].filter((b) => !one.includes(b));
    expect(first.selection).toEqual({
      releases: ['9.0.1.0'],
      components: [],
      chosen: { binaries: one.length, bytes: bytesOf(one) },
      leftOut: { binaries: leftOut.length, bytes: bytesOf(leftOut) },
    });
    for (const b of leftOut) expect(await exists(join(out, b.path))).toBe(false);
    // Left out on purpose: said, not counted against the depot, and not stale; the release chosen is complete.
    expect(first.verify.ok).toBe(true);
    expect(first.stale).toBe(0);
    const status = (r: MirrorReport) => Object.fromEntries(r.releases.map((s) => [s.version, s.complete]));
    expect(status(first)).toEqual({ '9.0.0.0': false, '9.0.1.0': true, '9.0.2.0': false });

    const second = await mirror(out, { releases: ['9.0.2.0'] });
    expect(second.ok).toBe(true);
    const two = needs('9.0.2.0').filter((b) => !one.includes(b));
    expect(paths(second.downloaded)).toEqual(paths(two));
    expect(second.bytesDownloaded).toBe(bytesOf(two));
    for (const b of one) expect(await exists(join(out, b.path))).toBe(true);
    expect(second.stale).toBe(0);
    expect(status(second)).toEqual({ '9.0.0.0': false, '9.0.1.0': true, '9.0.2.0': true });

    // Both kept in the verified state: a mirror of both downloads nothing and reads nothing again.
    const both = await mirror(out, { releases: ['9.0.1.0', '9.0.2.0'] });
    expect(both.downloaded).toEqual([]);
    expect(both.bytesHashedLocally).toBe(0);
    expect(paths(both.alreadyInPlace)).toEqual(paths([...one, ...two]));

    // The rest, later: only what no release chosen needed comes, and the depot is whole.
    const rest = await mirror(out);
    expect(paths(rest.downloaded)).toEqual(paths(leftOut.filter((b) => !two.includes(b))));
    expect(rest.selection).toBeUndefined();
    expect(status(rest)).toEqual({ '9.0.0.0': true, '9.0.1.0': true, '9.0.2.0': true });
  });

  it('chooses by component and image type, and says so in the human report', async () => {
    const out = fresh('mirror');
    const res = await cliMirror(out, ['--component', 'vcenter', '--image-type', 'PATCH']);
    expect(res.code).toBe(0);
    const vcenter = [...added.get('9.0.1.0')!, ...added.get('9.0.2.0')!].filter((b) => b.path.includes('/VCENTER/'));
    expect(res.stdout).toContain(`Selection (component VCENTER; image type PATCH): ${vcenter.length} binaries`);
    for (const b of vcenter) expect(await exists(join(out, b.path))).toBe(true);
    expect(await exists(join(out, added.get('9.0.2.0')!.find((b) => b.path.includes('/ESX_HOST/'))!.path))).toBe(false);
  });

  it('refuses an unknown release or component with one sentence naming the known ones, before anything is written (exit 2)', async () => {
    const out = fresh('mirror');
    const release = await cliMirror(out, ['--release', '9.9.9']);
    expect(release.code).toBe(2);
    expect(release.stderr).toContain('The release 9.9.9.0 is not in the catalog, which names 9.0.0.0, 9.0.1.0, 9.0.2.0.');
    const component = await refusal(mirror(out, { components: ['NOPE'] }));
    expect(component?.exitCode).toBe(EXIT.usage);
    expect(component?.message).toMatch(/The component NOPE is not in the catalog, which names [A-Z_, ]*VCENTER/);
    const type = await refusal(mirror(out, { imageType: 'SIDEWAYS' }));
    expect(type?.message).toContain('The image type SIDEWAYS is not one of INSTALL, UPGRADE, PATCH.');
    expect(await exists(out)).toBe(false);
    const packOut = fresh('pack');
    const packed = await refusal(packDepot({ depot, out: packOut, volumeSize: VOLUME, select: { releases: ['8.0'] } }));
    expect(packed?.exitCode).toBe(EXIT.usage);
    expect(packed?.message).toContain('The release 8.0.0.0 is not in the catalog');
    expect(await exists(packOut)).toBe(false);
  });
});

describe('depot pack of chosen releases', () => {
  it('carries all metadata and only the chosen binaries; the report and --json say what was left out', async () => {
    const args = [depot, '--release', '9.0.2.0', '--component', 'ESX_HOST', '--component', 'VCENTER'];
    const res = await runCli(['depot', 'pack', ...args, '--out', fresh('pack'), '--json']);
    expect(res.code).toBe(0);
    const report = JSON.parse(res.stdout) as PackReport;
    expect(report.ok).toBe(true);
    const chosen = added.get('9.0.2.0')!.filter((b) => /\/(ESX_HOST|VCENTER)\//.test(b.path));
    const leftOut = [...firstRelease, ...added.get('9.0.1.0')!, ...added.get('9.0.2.0')!.filter((b) => !chosen.includes(b))];
    const summary = {
      releases: ['9.0.2.0'],
      components: ['ESX_HOST', 'VCENTER'],
      chosen: { binaries: 2, bytes: bytesOf(chosen) },
      leftOut: { binaries: leftOut.length, bytes: bytesOf(leftOut) },
    };
    expect(report.selection).toEqual(summary);
    expect(report.missing).toEqual([]);
    const manifest = JSON.parse(await readFile(report.manifest, 'utf8')) as PackManifest;
    expect(paths(manifest.files.filter((f) => f.kind === 'binary'))).toEqual(paths(chosen));
    expect(manifest.files.map((f) => f.path)).toEqual(expect.arrayContaining([DEPOT_PATHS.catalog, DEPOT_PATHS.manifest, DEPOT_PATHS.hclAll]));
    // The manifest records the choice: unpack judges the depot on it.
    expect(manifest.selection).toEqual(summary);

    const human = formatPackReport(
      await packDepot({ depot, out: fresh('pack'), volumeSize: VOLUME, select: selectOptionsOf({ release: ['9.0.2.0'], component: ['ESX_HOST', 'VCENTER'] }) }),
    );
    expect(human).toContain(
      `Selection (release 9.0.2.0; component ESX_HOST, VCENTER): 2 binaries (${formatBytes(bytesOf(chosen))}) chosen, ${leftOut.length} binaries (${formatBytes(bytesOf(leftOut))}) left out; all metadata carried.`,
    );
  });
});
