import { randomBytes } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS, componentDir } from '../../src/constants.js';
import { createCa, issueServerCert } from '../../src/pki/index.js';
import { startDepotServer } from '../../src/server/index.js';
import type { PackManifest } from '../../src/transfer/format.js';
import type { MirrorReport } from '../../src/transfer/mirror.js';
import type { PackReport } from '../../src/transfer/pack.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { demo, readCatalog, sha256 } from './helpers.js';

// One depot holding three releases (9.0.0.0 from depot demo, 9.0.1.0 and 9.0.2.0 added as patches), served by depotkit serve.
const BINARY = 8 * 1024;
const USER = 'depot';
const PASSWORD = 'only what this site needs';

let base: string;
let cleanup: () => Promise<void>;
let depot: string;
let caFile: string;
let passwordFile: string;
let url: string;
let stop: () => Promise<void>;
/** The binaries each release added, by release. */
const added = new Map<string, { path: string; size: number }[]>();
let firstRelease: { path: string; size: number }[];
let n = 0;
const fresh = (name: string) => join(base, `${name}-${n++}`);

/** A patch release of some components: new binaries, listed in the catalog under its version and in the manifest's releases. */
async function addRelease(root: string, release: string, components: string[], sizes: number[]): Promise<void> {
  const catalog = await readCatalog(root);
  const list: { path: string; size: number }[] = [];
  for (const [i, component] of components.entries()) {
    const productVersion = `${release}.${25000000 + i}`;
    const fileName = `${component.toLowerCase()}-${productVersion}.bin`;
    const data = randomBytes(sizes[i]!);
    await writeFile(join(root, componentDir(component), fileName), data);
    catalog.patches[component]!.push({
      productVersion,
      artifacts: { bundles: [{ name: `bundle-${component}-${release}`, type: 'PATCH', binaries: [{ fileName, size: data.length, checksum: sha256(data) }] }] },
    });
    list.push({ path: `${componentDir(component)}/${fileName}`, size: data.length });
  }
  added.set(release, list);
  await writeFile(join(root, DEPOT_PATHS.catalog), `${JSON.stringify(catalog, null, 2)}\n`);
  const manifest = JSON.parse(await readFile(join(root, DEPOT_PATHS.manifest), 'utf8')) as {
    releases: { version: string; bom: { name: string; version: string }[] }[];
  };
  const first = manifest.releases[0]!;
  const bom = first.bom.map((b) => (components.includes(b.name) ? { ...b, version: `${release}.${25000000 + components.indexOf(b.name)}` } : b));
  manifest.releases.push({ ...first, version: release, bom });
  await writeFile(join(root, DEPOT_PATHS.manifest), `${JSON.stringify(manifest, null, 2)}\n`);
}

const paths = (list: { path: string }[]) => list.map((b) => b.path).sort();
const bytesOf = (list: { size: number }[]) => list.reduce((sum, b) => sum + b.size, 0);

beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir('depotkit-select-'));
  depot = await demo(join(base, 'depot'), BINARY);
  const catalog = await readCatalog(depot);
  firstRelease = Object.entries(catalog.patches).flatMap(([component, versions]) =>
    versions[0]!.artifacts.bundles[0]!.binaries.map((b) => ({ path: `${componentDir(component)}/${b.fileName}`, size: b.size })),
  );
  await addRelease(depot, '9.0.1.0', ['VCENTER', 'NSX_T_MANAGER'], [3000, 5000]);
  await addRelease(depot, '9.0.2.0', ['VCENTER', 'ESX_HOST', 'SDDC_MANAGER_VCF'], [7000, 11000, 13000]);
  const ca = await createCa({ keySize: 2048 });
  const issued = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  caFile = join(base, 'ca.pem');
  await writeFile(caFile, ca.certPem);
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

async function mirror(out: string, extra: string[]): Promise<{ code: number; report: MirrorReport; stderr: string }> {
  const res = await runCli(['depot', 'mirror', url, '--out', out, '--ca', caFile, '--user', USER, '--password-file', passwordFile, ...extra, '--json']);
  return { code: res.code, report: res.stdout ? (JSON.parse(res.stdout) as MirrorReport) : (undefined as unknown as MirrorReport), stderr: res.stderr };
}

async function pack(args: string[]): Promise<{ code: number; report: PackReport; stderr: string }> {
  const res = await runCli(['depot', 'pack', ...args, '--json']);
  return { code: res.code, report: res.stdout ? (JSON.parse(res.stdout) as PackReport) : (undefined as unknown as PackReport), stderr: res.stderr };
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

describe('depot mirror of chosen releases', () => {
  it("downloads one release's binaries and no other, all metadata; a later mirror of a second adds only its own and keeps the first", async () => {
    const out = fresh('mirror');
    const first = await mirror(out, ['--release', '9.0.1']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.report.ok).toBe(true);
    const one = added.get('9.0.1.0')!;
    expect(paths(first.report.downloaded)).toEqual(paths(one));
    expect(first.report.bytesDownloaded).toBe(bytesOf(one));
    expect(first.report.metadata.written).toEqual(expect.arrayContaining([DEPOT_PATHS.catalog, DEPOT_PATHS.manifest]));
    const leftOut = [...firstRelease, ...added.get('9.0.2.0')!];
    expect(first.report.selection).toEqual({
      releases: ['9.0.1.0'],
      components: [],
      chosen: { binaries: one.length, bytes: bytesOf(one) },
      leftOut: { binaries: leftOut.length, bytes: bytesOf(leftOut) },
    });
    for (const b of leftOut) expect(await exists(join(out, b.path))).toBe(false);
    // Left out on purpose: said, not counted against the depot, and not stale.
    expect(first.report.verify.ok).toBe(true);
    expect(first.report.stale).toBe(0);
    const status = (r: MirrorReport) => Object.fromEntries(r.releases.map((s) => [s.version, s.complete]));

    const second = await mirror(out, ['--release', '9.0.2.0']);
    expect(second.code).toBe(0);
    const two = added.get('9.0.2.0')!;
    expect(paths(second.report.downloaded)).toEqual(paths(two));
    expect(second.report.bytesDownloaded).toBe(bytesOf(two));
    for (const b of one) expect(await exists(join(out, b.path))).toBe(true);
    expect(second.report.stale).toBe(0);

    // Both kept in the verified state: a mirror of both downloads nothing and reads nothing again.
    const both = await mirror(out, ['--release', '9.0.1.0', '--release', '9.0.2.0']);
    expect(both.code).toBe(0);
    expect(both.report.downloaded).toEqual([]);
    expect(both.report.bytesHashedLocally).toBe(0);
    expect(paths(both.report.alreadyInPlace)).toEqual(paths([...one, ...two]));
    expect(status(both.report)).toMatchObject({ '9.0.0.0': false });

    // The rest, later: only release 9.0.0.0's binaries come, and the depot is whole.
    const rest = await mirror(out, []);
    expect(rest.code).toBe(0);
    expect(paths(rest.report.downloaded)).toEqual(paths(firstRelease));
    expect(rest.report.selection).toBeUndefined();
    expect(status(rest.report)).toEqual({ '9.0.0.0': true, '9.0.1.0': true, '9.0.2.0': true });
  });

  it('chooses by component and image type, and says so in the human report', async () => {
    const out = fresh('mirror');
    const res = await runCli([
      'depot',
      'mirror',
      url,
      '--out',
      out,
      '--ca',
      caFile,
      '--user',
      USER,
      '--password-file',
      passwordFile,
      '--component',
      'vcenter',
      '--image-type',
      'PATCH',
    ]);
    expect(res.code).toBe(0);
    const vcenter = [...added.get('9.0.1.0')!, ...added.get('9.0.2.0')!].filter((b) => b.path.includes('/VCENTER/'));
    expect(res.stdout).toContain(`Selection (component VCENTER; image type PATCH): ${vcenter.length} binaries`);
    for (const b of vcenter) expect(await exists(join(out, b.path))).toBe(true);
    expect(await exists(join(out, added.get('9.0.2.0')!.find((b) => b.path.includes('/ESX_HOST/'))!.path))).toBe(false);
  });

  it('refuses an unknown release or component with one sentence naming the known ones, before anything is written (exit 2)', async () => {
    const out = fresh('mirror');
    const release = await mirror(out, ['--release', '9.9.9']);
    expect(release.code).toBe(2);
    expect(release.stderr).toContain('The release 9.9.9.0 is not in the catalog, which names 9.0.0.0, 9.0.1.0, 9.0.2.0.');
    const component = await mirror(out, ['--component', 'NOPE']);
    expect(component.code).toBe(2);
    expect(component.stderr).toMatch(/The component NOPE is not in the catalog, which names [A-Z_, ]*VCENTER/);
    const type = await mirror(out, ['--image-type', 'SIDEWAYS']);
    expect(type.code).toBe(2);
    expect(type.stderr).toContain('The image type SIDEWAYS is not one of INSTALL, UPGRADE, PATCH.');
    expect(await exists(out)).toBe(false);
    const packOut = fresh('pack');
    const packed = await pack([depot, '--out', packOut, '--release', '8.0']);
    expect(packed.code).toBe(2);
    expect(packed.stderr).toContain('The release 8.0.0.0 is not in the catalog');
    expect(await exists(packOut)).toBe(false);
  });
});

describe('depot pack of chosen releases', () => {
  it('carries all metadata and only the chosen binaries; the report and --json say what was left out', async () => {
    const out = fresh('pack');
    const { code, report } = await pack([depot, '--out', out, '--release', '9.0.2.0', '--component', 'ESX_HOST', '--component', 'VCENTER']);
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    const chosen = added.get('9.0.2.0')!.filter((b) => /\/(ESX_HOST|VCENTER)\//.test(b.path));
    const leftOut = [...firstRelease, ...added.get('9.0.1.0')!, ...added.get('9.0.2.0')!.filter((b) => !chosen.includes(b))];
    expect(report.selection).toEqual({
      releases: ['9.0.2.0'],
      components: ['ESX_HOST', 'VCENTER'],
      chosen: { binaries: 2, bytes: bytesOf(chosen) },
      leftOut: { binaries: leftOut.length, bytes: bytesOf(leftOut) },
    });
    expect(report.missing).toEqual([]);
    const manifest = JSON.parse(await readFile(report.manifest, 'utf8')) as PackManifest;
    expect(paths(manifest.files.filter((f) => f.kind === 'binary'))).toEqual(paths(chosen));
    expect(manifest.files.map((f) => f.path)).toEqual(expect.arrayContaining([DEPOT_PATHS.catalog, DEPOT_PATHS.manifest, DEPOT_PATHS.hclAll]));

    const human = await runCli(['depot', 'pack', depot, '--out', fresh('pack'), '--release', '9.0.2.0', '--component', 'ESX_HOST', '--component', 'VCENTER']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`Selection (release 9.0.2.0; component ESX_HOST, VCENTER): 2 binaries`);
    expect(human.stdout).toContain(`${leftOut.length} binaries`);
  });
});
