import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEPOT_PATHS, TEMP_PREFIX, componentDir } from '../../src/constants.js';
import type { Catalog } from '../../src/depot/catalog.js';
import { pruneDepot } from '../../src/transfer/prune.js';
import { tempDir } from '../helpers/temp.js';
import { demo, readCatalog, sha256 } from './helpers.js';

// The catalog reader refuses a file name that starts like a temporary file's; prune must not rely on it alone.
// Here it lets one through, as the reader did before it refused them.
vi.mock('../../src/depot/catalog.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/depot/catalog.js')>();
  return { ...real, parseCatalog: (text: string) => JSON.parse(text) as Catalog };
});

let base: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: base, cleanup } = await tempDir('depotkit-named-temps-')));
afterAll(() => cleanup());

describe('prune and a catalog that names a file like a temporary one', () => {
  it('never lists or removes a file the catalog names, whatever its name looks like; a real leftover still goes', async () => {
    const depot = await demo(join(base, 'depot'), 1024);
    const catalog = await readCatalog(depot);
    const body = Buffer.from('a binary the catalog names');
    const fileName = `${TEMP_PREFIX}named.bin`;
    catalog.patches.VCENTER![0]!.artifacts.bundles[0]!.binaries.push({ fileName, size: body.length, checksum: sha256(body) });
    await writeFile(join(depot, DEPOT_PATHS.catalog), JSON.stringify(catalog));
    const named = join(depot, componentDir('VCENTER'), fileName);
    await writeFile(named, body);
    const leftover = join(depot, componentDir('VCENTER'), `${TEMP_PREFIX}0123456789ab-vcenter.iso`);
    await writeFile(leftover, 'left by a killed run');

    const report = await pruneDepot(depot, { yes: true });
    expect(report.candidates.map((c) => c.path)).toEqual([`${componentDir('VCENTER')}/${TEMP_PREFIX}0123456789ab-vcenter.iso`]);
    expect(existsSync(named)).toBe(true);
    expect(existsSync(leftover)).toBe(false);
  });
});
