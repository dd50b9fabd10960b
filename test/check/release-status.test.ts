import { copyFile, cp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCheckResult } from '../../src/cli/check.js';
import type { ReleaseVerdict } from '../../src/depot/release-status.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { checkDepot } from '../../src/check/check.js';
import { type DepotServer, startDepotServer } from '../../src/server/index.js';
import { readCatalogBinaries } from '../depot/helpers.js';
import { type ReleasesDepot, ownBinaries, releasesDepot } from '../depot/releases.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

let base: string;
let cleanup: () => Promise<void>;
let root: string;
let fixture: ReleasesDepot;
let caPem: string;
let caFile: string;
let tls: { certPem: string; keyPem: string };

beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir());
  root = join(base, 'releases');
  fixture = await releasesDepot(root);
  const ca = await createCa({ keySize: 2048 });
  const issued = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  tls = { certPem: issued.chainPem, keyPem: issued.keyPem };
  caPem = ca.certPem;
  caFile = join(base, 'ca.pem');
  await writeFile(caFile, caPem);
});
afterAll(() => cleanup());

/** Serves `dir` over TLS on 127.0.0.1 for the length of `use`. */
async function served<T>(dir: string, use: (server: DepotServer) => Promise<T>): Promise<T> {
  const server = await startDepotServer({ root: dir, host: '127.0.0.1', port: 0, tls });
  try {
    return await use(server);
  } finally {
    await server.close();
  }
}

const states = (releases: ReleaseVerdict[]) => releases.map((r) => [r.version, r.state]);
const EXPECTED = [
  ['9.0.0.0', 'complete'],
  ['9.0.1.0', 'metadata-only'],
  ['9.0.2.0', 'binaries-missing'],
  ['9.0.3.0', 'wrong-binaries'],
];

describe('check, release by release', () => {
  it('judges each served release from HEAD, as verify does from the disk', async () => {
    const result = await served(root, (server) => checkDepot(server.url, { caPems: [caPem] }));
    expect(result.grouping).toBe('manifest');
    expect(states(result.releases)).toEqual(EXPECTED);
    const [, metadataOnly, missing, other] = result.releases as ReleaseVerdict[];
    expect(metadataOnly!.counts).toMatchObject({ binaries: 16, present: 14, missing: 2 });
    expect(missing!.files.map((f) => [f.path, f.problem])).toEqual([[fixture.missing.path, 'missing']]);
    expect(other!.files).toEqual([
      expect.objectContaining({
        path: fixture.otherBuild.path,
        problem: 'other-build',
        otherBuild: expect.objectContaining({ path: fixture.otherBuild.holds, productVersion: fixture.otherBuild.holdsVersion, by: 'size' }),
      }),
    ]);
    // A release left out of a cut depot is said, not held against it; the partly present one is.
    const severity = (path: string) => result.findings.find((f) => f.path === path)?.severity;
    for (const path of ownBinaries(fixture.metadataOnly)) expect(severity(path)).toBe('info');
    expect(severity(fixture.missing.path)).toBe('error');
    expect(result.findings.find((f) => f.path === fixture.otherBuild.path)!.message).toContain(
      `Its size is that of vcenter-${fixture.otherBuild.holdsVersion}.bin`,
    );
    expect(result.accepted).toBe(false);
    const lines = formatCheckResult(result);
    expect(lines).toContain("Releases (the manifest's):");
    expect(lines).toContain(`    ${fixture.missing.path} (NSX_T_MANAGER 9.0.2.0.25000001) is missing.`);
  });

  it('accepts a depot cut to one release, and with deep names a swapped build by its SHA-256', async () => {
    const dir = join(base, 'cut');
    await cp(root, dir, { recursive: true });
    for (const version of ['9.0.2.0', '9.0.3.0']) for (const path of ownBinaries(version)) await rm(join(dir, path), { force: true });
    const cut = await served(dir, (server) => checkDepot(server.url, { caPems: [caPem] }));
    expect(states(cut.releases)).toEqual([
      ['9.0.0.0', 'complete'],
      ['9.0.1.0', 'metadata-only'],
      ['9.0.2.0', 'metadata-only'],
      ['9.0.3.0', 'metadata-only'],
    ]);
    expect(cut.findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect(cut.accepted).toBe(true);

    const binaries = await readCatalogBinaries(dir);
    const vcenter = binaries.find((b) => b.component === 'VCENTER' && b.productVersion.startsWith('9.0.0.0'))!;
    const vrops = binaries.find((b) => b.component === 'VROPS')!;
    await copyFile(join(dir, vcenter.path), join(dir, vrops.path));
    const deep = await served(dir, (server) => checkDepot(server.url, { caPems: [caPem], deep: true }));
    expect(deep.releases[0]!.state).toBe('wrong-binaries');
    expect(deep.releases[0]!.files).toEqual([
      expect.objectContaining({ path: vrops.path, problem: 'other-build', otherBuild: expect.objectContaining({ path: vcenter.path, by: 'sha256' }) }),
    ]);
  });
});

describe('depotkit check --json, release by release', () => {
  it('carries one object per release: version, state, counts, files with problems; exit 1', async () => {
    const run = await served(root, (server) => runCli(['check', server.url, '--ca', caFile, '--json']));
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as { grouping: string; releases: ReleaseVerdict[] };
    expect(report.grouping).toBe('manifest');
    expect(states(report.releases)).toEqual(EXPECTED);
    for (const r of report.releases) {
      expect(Object.keys(r).sort()).toEqual(['bytes', 'counts', 'files', 'leftOut', 'message', 'state', 'version']);
      expect(Object.keys(r.counts).sort()).toEqual(['binaries', 'leftOut', 'missing', 'present', 'unreadable', 'wrongBytes']);
    }
    expect(report.releases[3]!.files[0]).toMatchObject({ path: fixture.otherBuild.path, expected: { size: expect.any(Number), sha256: expect.any(String) } });
  });
});
