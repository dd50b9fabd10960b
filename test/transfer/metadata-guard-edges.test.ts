import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatMirrorReport } from '../../src/cli/transfer-mirror.js';
import { formatUnpackReport } from '../../src/cli/transfer-unpack.js';
import { DEPOT_PATHS } from '../../src/constants.js';
import type { Catalog } from '../../src/depot/catalog.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { hclTimestamps } from '../../src/depot/hcl.js';
import { compareCatalogs } from '../../src/depot/metadata-guard.js';
import { verifyDepot } from '../../src/depot/verify.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { startDepotServer } from '../../src/server/index.js';
import { mirrorDepot } from '../../src/transfer/mirror.js';
import { packDepot } from '../../src/transfer/pack.js';
import { unpackDepot } from '../../src/transfer/unpack.js';
import { EXIT } from '../../src/util/errors.js';
import { useTempDir } from '../helpers/temp.js';
import { readCatalog } from './helpers.js';
import { readManifest, writeManifest } from './tamper.js';

// The metadata guard's edges: each metadata file by its own age, dates no release can have, a selection held to
// the catalog. The library in-process, on demo depots of several releases.
const VOLUME = 1024 ** 3;
const DAY = 86_400_000;

const tmp = useTempDir('depotkit-guard-edges-');
const fresh = tmp.fresh;

async function demoOf(releases: string[], now = new Date()): Promise<string> {
  const dir = fresh('demo');
  await makeDemoDepot(dir, { releases, binarySize: 1024, signingDir: `${dir}-signing`, now });
  return dir;
}

async function writeHcl(root: string, at: Date): Promise<string> {
  const times = hclTimestamps(at);
  await writeFile(join(root, DEPOT_PATHS.hclAll), JSON.stringify({ ...times, data: { controller: [], hdd: [], ssd: [] } }));
  await writeFile(join(root, DEPOT_PATHS.hclLastUpdated), JSON.stringify(times));
  return readFile(join(root, DEPOT_PATHS.hclLastUpdated), 'utf8');
}

describe('the vSAN HCL is guarded by its own timestamp', () => {
  it('an older pack of the same catalog keeps the newer HCL in place and says so; with force it replaces it and keeps a backup', async () => {
    // The pack's HCL is 30 days old; the depot's is updated since.
    const source = await demoOf(['9.0.0.0'], new Date(Date.now() - 30 * DAY));
    const pack = await packDepot({ depot: source, out: fresh('pack'), volumeSize: VOLUME });
    const out = fresh('depot');
    expect((await unpackDepot({ media: [pack.out], out })).ok).toBe(true);
    const newer = await writeHcl(out, new Date());

    const again = await unpackDepot({ media: [pack.out], out });
    expect(again.ok).toBe(true);
    expect(await readFile(join(out, DEPOT_PATHS.hclLastUpdated), 'utf8')).toBe(newer);
    expect(again.hcl).toMatchObject({ action: 'kept' });
    expect(again.hcl!.because).toMatch(/^it was updated \d{4}-\d\d-\d\d \d\d:\d\d UTC, the depot's \d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    expect(again.placed.map((p) => p.path)).not.toContain(DEPOT_PATHS.hclAll);
    expect(formatUnpackReport(again).join('\n')).toContain("The depot's vSAN HCL was kept: the pack's is not newer (it was updated");

    const forced = await unpackDepot({ media: [pack.out], out, force: true });
    expect(forced.hcl).toMatchObject({ action: 'replaced' });
    expect(await readFile(join(out, DEPOT_PATHS.hclLastUpdated), 'utf8')).not.toBe(newer);
    expect(await readFile(join(forced.hcl!.backup!, DEPOT_PATHS.hclLastUpdated), 'utf8')).toBe(newer);
  });
});

describe('the vSAN HCL on a mirror', () => {
  it("a mirror of a source whose HCL is older keeps the depot's newer one and says so", async () => {
    const source = await demoOf(['9.0.0.0'], new Date(Date.now() - 30 * DAY));
    const ca = await createCa({ keySize: 2048 });
    const issued = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
    const server = await startDepotServer({ root: source, host: '127.0.0.1', port: 0, tls: { certPem: issued.chainPem, keyPem: issued.keyPem } });
    try {
      const url = server.url.replace('127.0.0.1', 'localhost');
      const out = fresh('mirror');
      expect((await mirrorDepot({ url, out, caPems: [ca.certPem] })).ok).toBe(true);
      const newer = await writeHcl(out, new Date());
      const again = await mirrorDepot({ url, out, caPems: [ca.certPem] });
      expect(again.hcl).toMatchObject({ action: 'kept' });
      expect(await readFile(join(out, DEPOT_PATHS.hclLastUpdated), 'utf8')).toBe(newer);
      expect(again.metadata.written).not.toContain(DEPOT_PATHS.hclAll);
      expect(formatMirrorReport(again).join('\n')).toContain("The depot's vSAN HCL was kept: the server's is not newer (it was updated");
    } finally {
      await server.close();
    }
  });
});

describe('dates no release can have yet', () => {
  it('a pack whose catalog is dated 2999 is refused over a depot without force, before anything is written', async () => {
    const out = await demoOf(['9.0.0.0']);
    const source = fresh('dated');
    await cp(out, source, { recursive: true });
    const catalog = await readCatalog(source);
    catalog.patches.VCENTER![0]!.releaseDate = '2999-01-01';
    await writeFile(join(source, DEPOT_PATHS.catalog), JSON.stringify(catalog, null, 2));
    const before = await readFile(join(out, DEPOT_PATHS.catalog));
    const pack = await packDepot({ depot: source, out: fresh('pack'), volumeSize: VOLUME });
    await expect(unpackDepot({ media: [pack.out], out })).rejects.toMatchObject({
      exitCode: EXIT.usage,
      message: expect.stringMatching(/carries a date no release can have yet \(VCENTER [\d.]+ is dated 2999-01-01, after today/),
    });
    expect((await readFile(join(out, DEPOT_PATHS.catalog))).equals(before)).toBe(true);
  });

  it('a date in 2999 that got in is left out of the order: the next real release is not refused as older', async () => {
    const dated = await readCatalog(await demoOf(['9.0.0.0']));
    dated.patches.VCENTER![0]!.releaseDate = '2999-01-01';
    const next: Catalog = await readCatalog(await demoOf(['9.0.0.0', '9.0.1.0']));
    const change = compareCatalogs(next, dated);
    expect(change.older).toBeUndefined();
    expect(change.implausible).toBeUndefined();
    expect(compareCatalogs(dated, next).implausible).toMatch(/is dated 2999-01-01/);
  });
});

describe("a pack manifest's selection is held to the catalog", () => {
  it('an unsealed manifest whose selection names a release the catalog lacks, carrying no binary, is refused (exit 2) and nothing is written', async () => {
    const source = await demoOf(['9.0.0.0', '9.0.1.0']);
    const pack = await packDepot({ depot: source, out: fresh('pack'), volumeSize: VOLUME, select: { releases: ['9.0.1.0'] } });
    const manifest = await readManifest(pack.out);
    manifest.selection = { ...manifest.selection!, releases: ['9.9.9.0'] };
    manifest.files = manifest.files.filter((f) => f.kind !== 'binary');
    await writeManifest(pack.out, manifest);
    const out = fresh('depot');
    await expect(unpackDepot({ media: [pack.out], out })).rejects.toMatchObject({
      exitCode: EXIT.usage,
      message: expect.stringContaining(
        'records a selection that does not fit its catalog: The release 9.9.9.0 is not in the catalog, which names 9.0.0.0, 9.0.1.0',
      ),
    });
    await expect(verifyDepot(out)).rejects.toMatchObject({ exitCode: EXIT.usage });
  });
});
