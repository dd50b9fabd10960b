import { cp, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS, TEMP_PREFIX } from '../../src/constants.js';
import { buildDepot } from '../../src/depot/build.js';
import { useTempDir } from '../helpers/temp.js';
import { type NextRelease, demo, nextRelease } from '../transfer/helpers.js';
import { outcome, packIn, unpackIn } from '../transfer/in-process.js';
import { vendorLikeSource } from './helpers.js';

const BINARY = 64 * 1024;

const tmp = useTempDir('depotkit-guard-');
let first: string;
let next: NextRelease;
const fresh = tmp.fresh;

beforeAll(async () => {
  first = await demo(join(tmp.dir, 'first'), BINARY);
  next = await nextRelease(first, join(tmp.dir, 'next'), BINARY);
});

async function pack(depot: string, since?: string): Promise<string> {
  const out = fresh('pack');
  const res = await packIn(depot, out, since ? { since } : {});
  expect(res.code, res.stderr).toBe(0);
  return out;
}

async function copyOf(depot: string): Promise<string> {
  const dir = fresh('depot');
  await cp(depot, dir, { recursive: true });
  return dir;
}

async function backups(root: string): Promise<string[]> {
  return readdir(join(root, '.depotkit', 'metadata-backup')).catch(() => []);
}

describe('imports never move metadata backwards', () => {
  it('unpack of an older release onto a newer depot is refused unless force; with force the replaced metadata is kept and the change reported', async () => {
    const older = await pack(first);
    const depot = await copyOf(next.dir);
    const newCatalog = await readFile(join(depot, DEPOT_PATHS.catalog));

    const refused = await unpackIn([older], depot);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/older than the one in .*backwards/);
    expect((await readFile(join(depot, DEPOT_PATHS.catalog))).equals(newCatalog)).toBe(true);
    expect(await backups(depot)).toEqual([]);

    const { report } = await unpackIn([older], depot, { force: true });
    expect(report.metadata).toBe('placed');
    expect(report.metadataChange?.removed).toEqual(['NSX_T_MANAGER 9.0.1.0.25000000', 'VCENTER 9.0.1.0.25000000']);
    expect(report.metadataChange?.added.some((e) => e.startsWith('VRLI '))).toBe(true);
    const [kept] = await backups(depot);
    expect(kept).toBeDefined();
    expect((await readFile(join(depot, '.depotkit', 'metadata-backup', kept!, DEPOT_PATHS.catalog))).equals(newCatalog)).toBe(true);
  });

  it('a delta of the next release onto the first keeps the first release complete, backs the old metadata up and names what was added', async () => {
    const delta = await pack(next.dir, first);
    const depot = await copyOf(first);
    const oldCatalog = await readFile(join(depot, DEPOT_PATHS.catalog));
    const { report } = await unpackIn([delta], depot);
    expect(report.metadata).toBe('placed');
    expect(report.metadataChange?.added).toEqual(['NSX_T_MANAGER 9.0.1.0.25000000', 'VCENTER 9.0.1.0.25000000']);
    expect(report.releases.every((r) => r.complete)).toBe(true);
    expect(report.releases.length).toBe(2);
    const [kept] = await backups(depot);
    expect((await readFile(join(depot, '.depotkit', 'metadata-backup', kept!, DEPOT_PATHS.catalog))).equals(oldCatalog)).toBe(true);
    // Only the depot's own metadata is kept, never the incoming files under their temporary names.
    const keptFiles = await readdir(join(depot, '.depotkit', 'metadata-backup', kept!), { recursive: true });
    expect(keptFiles.filter((f) => f.split('/').pop()!.startsWith(TEMP_PREFIX))).toEqual([]);
  });

  it('depot build of older metadata into a newer depot is refused unless force; with force the replaced metadata is kept and the change reported', async () => {
    const src = await vendorLikeSource(fresh('vendor'), BINARY);
    const depot = await copyOf(next.dir);
    const newCatalog = await readFile(join(depot, DEPOT_PATHS.catalog));
    const build = (force = false) => outcome(buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out: depot, force }));

    const refused = await build();
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/older than the one in .*backwards/);
    expect(await backups(depot)).toEqual([]);

    const { report } = await build(true);
    expect(report.metadataChange?.removed).toEqual(['NSX_T_MANAGER 9.0.1.0.25000000', 'VCENTER 9.0.1.0.25000000']);
    const [kept] = await backups(depot);
    expect((await readFile(join(depot, '.depotkit', 'metadata-backup', kept!, DEPOT_PATHS.catalog))).equals(newCatalog)).toBe(true);
  });
});
