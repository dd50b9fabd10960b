import { copyFile, cp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatVerifyResult } from '../../src/cli/depot.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import type { ReleaseVerdict } from '../../src/depot/release-status.js';
import { verifyDepot } from '../../src/depot/verify.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { startDepotServer } from '../../src/server/index.js';
import { mirrorDepot } from '../../src/transfer/mirror.js';
import { runCli } from '../helpers/cli.js';
import { useTempDir } from '../helpers/temp.js';
import { addRelease } from '../transfer/releases-fixture.js';
import { readCatalogBinaries } from './helpers.js';
import { CUT_RELEASE_STATES, RELEASE_STATES, type ReleasesDepot, ownBinaries, releaseStates, releasesDepot } from './releases.js';

const tmp = useTempDir();
let root: string;
let fixture: ReleasesDepot;
let n = 0;

beforeAll(async () => {
  root = join(tmp.dir, 'releases');
  fixture = await releasesDepot(root);
});

async function copyOf(): Promise<string> {
  const dir = join(tmp.dir, `case-${n++}`);
  await cp(root, dir, { recursive: true });
  return dir;
}

describe('depot verify, release by release', () => {
  it('says which release is complete, metadata only, missing a binary, or holding another build', async () => {
    const result = await verifyDepot(root);
    expect(result.grouping).toBe('manifest');
    expect(releaseStates(result.releases)).toEqual(RELEASE_STATES);
    const [complete, metadataOnly, missing, other] = result.releases as [ReleaseVerdict, ReleaseVerdict, ReleaseVerdict, ReleaseVerdict];
    expect(complete.counts).toEqual({ binaries: 16, present: 16, missing: 0, wrongBytes: 0, unreadable: 0, leftOut: 0 });
    expect(complete.files).toEqual([]);
    // Its unchanged components are 9.0.0.0's and here; its own two builds are not.
    expect(metadataOnly.counts).toMatchObject({ binaries: 16, present: 14, missing: 2 });
    expect(metadataOnly.message).toContain('metadata only');
    expect(missing.counts).toMatchObject({ present: 15, missing: 1, wrongBytes: 0 });
    expect(missing.files.map((f) => [f.path, f.problem])).toEqual([[fixture.missing.path, 'missing']]);
    expect(missing.message).toBe('Release 9.0.2.0 has 1 of its 16 binaries missing: the installer fails their download.');
    const [wrong] = other.files;
    expect(other.files).toHaveLength(1);
    expect(wrong).toMatchObject({
      path: fixture.otherBuild.path,
      component: 'VCENTER',
      productVersion: fixture.otherBuild.productVersion,
      problem: 'other-build',
      otherBuild: { path: fixture.otherBuild.holds, component: 'VCENTER', productVersion: fixture.otherBuild.holdsVersion, by: 'size' },
    });
    expect(wrong!.actual!.size).not.toBe(wrong!.expected.size);
    expect(wrong!.message).toContain(`the size of vcenter-${fixture.otherBuild.holdsVersion}.bin`);
    expect(wrong!.message).toContain(`release 9.0.3.0 lists VCENTER ${fixture.otherBuild.productVersion}`);
  });

  it('keeps the missing binary of a partly present release an error, and says a metadata-only release as info', async () => {
    const result = await verifyDepot(root);
    const severityOf = (path: string) => result.findings.filter((f) => f.path === path).map((f) => [f.id, f.severity]);
    for (const path of ownBinaries(fixture.metadataOnly)) expect(severityOf(path)).toEqual([['binary.missing', 'info']]);
    expect(severityOf(fixture.missing.path)).toEqual([['binary.missing', 'error']]);
    const size = result.findings.find((f) => f.path === fixture.otherBuild.path)!;
    expect(size.severity).toBe('error');
    expect(size.message).toContain(`Its size is that of vcenter-${fixture.otherBuild.holdsVersion}.bin`);
    expect(size.message).not.toContain('partial download');
    expect(result.ok).toBe(false);
  });

  it('passes a depot cut to one release: the others metadata only, not an error', async () => {
    const dir = await copyOf();
    for (const version of ['9.0.2.0', '9.0.3.0']) for (const path of ownBinaries(version)) await rm(join(dir, path), { force: true });
    const result = await verifyDepot(dir, { deep: true });
    expect(releaseStates(result.releases)).toEqual(CUT_RELEASE_STATES);
    expect(result.findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect(result.ok).toBe(true);
  });

  it('still fails a depot that holds no binary at all', async () => {
    const dir = join(tmp.dir, `empty-${n++}`);
    await makeDemoDepot(dir, { binarySize: 1024 });
    for (const b of await readCatalogBinaries(dir)) await rm(join(dir, b.path));
    const result = await verifyDepot(dir);
    expect(releaseStates(result.releases)).toEqual([['9.0.0.0', 'metadata-only']]);
    expect(result.findings.filter((f) => f.id === 'binary.missing').every((f) => f.severity === 'error')).toBe(true);
    expect(result.ok).toBe(false);
  });

  it('fails a depot that holds only the builds its releases share, none of any release of its own', async () => {
    const dir = await copyOf();
    const shared = await readCatalogBinaries(dir);
    const ga = shared.filter((b) => ['VCENTER', 'NSX_T_MANAGER'].includes(b.component) && b.productVersion.startsWith('9.0.0.0')).map((b) => b.path);
    for (const path of [...ga, ...['9.0.2.0', '9.0.3.0'].flatMap(ownBinaries)]) await rm(join(dir, path), { force: true });
    const result = await verifyDepot(dir);
    expect(result.releases.map((r) => r.state)).toEqual(['metadata-only', 'metadata-only', 'metadata-only', 'metadata-only']);
    expect(result.findings.filter((f) => f.id === 'binary.missing' && f.severity === 'error').map((f) => f.path)).toHaveLength(8);
    expect(result.ok).toBe(false);
  });

  it('with deep, names the build whose bytes a file of the right size holds, by SHA-256', async () => {
    const dir = await copyOf();
    const binaries = await readCatalogBinaries(dir);
    const vcenter = binaries.find((b) => b.component === 'VCENTER' && b.productVersion.startsWith('9.0.0.0'))!;
    const vrops = binaries.find((b) => b.component === 'VROPS')!;
    expect(vrops.size).toBe(vcenter.size);
    await copyFile(join(dir, vcenter.path), join(dir, vrops.path));
    // By size alone the swap cannot be seen.
    expect((await verifyDepot(dir)).releases[0]!.state).toBe('complete');
    const deep = await verifyDepot(dir, { deep: true });
    const first = deep.releases[0]!;
    expect(first.state).toBe('wrong-binaries');
    expect(first.files).toEqual([
      expect.objectContaining({ path: vrops.path, problem: 'other-build', otherBuild: expect.objectContaining({ path: vcenter.path, by: 'sha256' }) }),
    ]);
    expect(deep.findings.find((f) => f.path === vrops.path)!.message).toContain(`Its bytes are those of ${vcenter.fileName}`);
  });
});

describe('depot verify after a selective mirror', () => {
  it('passes the mirror of one release of three: that release complete, the others metadata only', async () => {
    const source = join(tmp.dir, `source-${n++}`);
    await makeDemoDepot(source, { binarySize: 2048 });
    for (const [r, version] of ['9.0.1.0', '9.0.2.0'].entries()) await addRelease(source, version, ['VCENTER', 'NSX_T_MANAGER'], [3000 + r, 3100 + r]);
    const ca = await createCa({ keySize: 2048 });
    const issued = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
    const server = await startDepotServer({ root: source, host: '127.0.0.1', port: 0, tls: { certPem: issued.chainPem, keyPem: issued.keyPem } });
    const out = join(tmp.dir, `mirror-${n++}`);
    try {
      expect((await mirrorDepot({ url: server.url, out, caPems: [ca.certPem], select: { releases: ['9.0.1.0'] } })).ok).toBe(true);
    } finally {
      await server.close();
    }
    const result = await verifyDepot(out, { deep: true });
    expect(releaseStates(result.releases)).toEqual([
      ['9.0.0.0', 'metadata-only'],
      ['9.0.1.0', 'complete'],
      ['9.0.2.0', 'metadata-only'],
    ]);
    expect(result.findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect(result.ok).toBe(true);
  });
});

describe('depotkit depot verify, release by release', () => {
  it('carries each release in --json (exit 1 for a partly present release) and prints a section per release', async () => {
    const json = await runCli(['depot', 'verify', root, '--json']);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as { grouping: string; releases: ReleaseVerdict[] };
    expect(report.grouping).toBe('manifest');
    expect(releaseStates(report.releases)).toEqual(RELEASE_STATES);
    for (const r of report.releases) {
      expect(Object.keys(r).sort()).toEqual(['bytes', 'counts', 'files', 'leftOut', 'message', 'state', 'version']);
      expect(Object.keys(r.counts).sort()).toEqual(['binaries', 'leftOut', 'missing', 'present', 'unreadable', 'wrongBytes']);
      for (const f of r.files)
        expect(f).toEqual(expect.objectContaining({ path: expect.any(String), problem: expect.any(String), expected: expect.any(Object) }));
    }
    // The lines for people, from the same result (the command prints these).
    const lines = formatVerifyResult(await verifyDepot(root));
    expect(lines).toContain("Releases (the manifest's):");
    expect(lines).toContain('  Release 9.0.0.0 is complete: all 16 binaries are here with their bytes.');
    expect(lines.some((l) => l.startsWith('  Release 9.0.1.0 is metadata only'))).toBe(true);
    expect(lines.some((l) => l.startsWith('  Release 9.0.2.0 has 1 of its 16 binaries missing'))).toBe(true);
    expect(lines).toContain(`    ${fixture.missing.path} (NSX_T_MANAGER 9.0.2.0.25000001) is missing.`);
    expect(lines.some((l) => l.startsWith(`    ${fixture.otherBuild.path} is `))).toBe(true);
    // A metadata-only release's files are absent on purpose: not listed.
    for (const path of ownBinaries(fixture.metadataOnly)) expect(lines.some((l) => l.includes(path))).toBe(false);
  });
});
