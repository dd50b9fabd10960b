import { spawnSync } from 'node:child_process';
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEPOT_PATHS, PACK_DEFAULT_VOLUME_PRESET, PACK_VOLUME_PRESETS, TEMP_PREFIX, componentDir } from '../../src/constants.js';
import { VerifiedState } from '../../src/depot/place.js';
import { packDepot } from '../../src/transfer/pack.js';
import { TargetDepot } from '../../src/transfer/target.js';
import { type UnpackReport, unpackDepot } from '../../src/transfer/unpack.js';
import { CLI } from '../helpers/cli.js';
import { recordFlushes } from '../helpers/flushes.js';
import { tempDir } from '../helpers/temp.js';
import { demo, readCatalog, sha256 } from './helpers.js';

const TINY = 300;

let base: string;
let cleanup: () => Promise<void>;
let packDir: string;
let tiny: string[];

/** A demo depot plus TINY tiny binaries of VCENTER in its catalog: many files, few bytes. */
async function manyTinyBinaries(dir: string): Promise<string[]> {
  await demo(dir, 0);
  const catalog = await readCatalog(dir);
  const binaries = Array.from({ length: TINY }, (_, i) => {
    const body = Buffer.from(`tiny binary ${i}\n`);
    return { fileName: `tiny-${i}.bin`, size: body.length, checksum: sha256(body), body };
  });
  for (const b of binaries) await writeFile(join(dir, componentDir('VCENTER'), b.fileName), b.body);
  catalog.patches.VCENTER![0]!.artifacts.bundles.push({ name: 'tiny', type: 'INSTALL', binaries: binaries.map(({ body: _, ...b }) => b) });
  await writeFile(join(dir, DEPOT_PATHS.catalog), JSON.stringify(catalog));
  return binaries.map((b) => `${componentDir('VCENTER')}/${b.fileName}`);
}

beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir('depotkit-unpack-durable-'));
  base = await realpath(base);
  tiny = await manyTinyBinaries(join(base, 'depot'));
  packDir = join(base, 'pack');
  // One volume of the command's default size: it holds every tiny file.
  expect((await packDepot({ depot: join(base, 'depot'), out: packDir, volumeSize: PACK_VOLUME_PRESETS[PACK_DEFAULT_VOLUME_PRESET]! })).ok).toBe(true);
});
afterAll(() => cleanup());

describe('unpack writes durably and cheaply', () => {
  const out = () => join(base, 'out');
  let run: { flushes: string[]; saves: number; seconds: number; ok: boolean; placed: number } | undefined;
  /** One unpack of the many tiny files, watched: every flush, and every save of the verified state. */
  const unpackWatched = async () => {
    if (run) return run;
    const saves = vi.spyOn(VerifiedState.prototype, 'save');
    const { flushes: recorded, restore } = await recordFlushes();
    const started = Date.now();
    try {
      const report = await unpackDepot({ media: [packDir], out: out() });
      run = {
        flushes: recorded.map((f) => f.path),
        saves: saves.mock.calls.length,
        seconds: (Date.now() - started) / 1000,
        ok: report.ok,
        placed: report.placed.length,
      };
    } finally {
      restore();
      saves.mockRestore();
    }
    return run;
  };

  it("syncs each folder renamed into after its files' data: a power cut cannot take back a file remembered as placed", async () => {
    const { flushes, ok, placed } = await unpackWatched();
    expect(ok).toBe(true);
    expect(placed).toBeGreaterThan(TINY);
    // Each tiny binary's data is flushed under its temporary name; its folder is synced after the last of them.
    const folder = join(out(), componentDir('VCENTER'));
    const lastData = flushes.findLastIndex((f) => dirname(f) === folder && basename(f).startsWith(TEMP_PREFIX));
    expect(lastData).toBeGreaterThanOrEqual(0);
    expect(flushes.indexOf(folder, lastData + 1)).toBeGreaterThan(lastData);
    // The catalog's folder too, after the catalog's rename (it is placed last).
    const catalogFolder = dirname(join(out(), DEPOT_PATHS.catalog));
    const catalogData = flushes.findLastIndex((f) => dirname(f) === catalogFolder && f.endsWith(`-${basename(DEPOT_PATHS.catalog)}`));
    expect(flushes.indexOf(catalogFolder, catalogData + 1)).toBeGreaterThan(catalogData);
  });

  it('saves the verified state in batches (at most about once a second, and at the end), not after every file', async () => {
    const { saves, seconds } = await unpackWatched();
    // Hundreds of files, a handful of saves.
    expect(saves).toBeLessThanOrEqual(Math.ceil(seconds) + 3);
    const state = JSON.parse(await readFile(join(out(), '.depotkit', 'verified.json'), 'utf8')) as Record<string, unknown>;
    for (const path of tiny) expect(state[join(out(), path)]).toBeDefined();
  });

  it('keeps few files open however many small files a volume holds: hundreds unpack within a limit of 128 open files', async () => {
    const limited = join(base, 'limited');
    // What a volume delivers waits for the files before it to be flushed, instead of opening one file after another.
    const res = spawnSync('sh', ['-c', `ulimit -n 128 && exec "${process.execPath}" "${CLI}" depot unpack "${packDir}" --out "${limited}" --json`], {
      encoding: 'utf8',
    });
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    expect((JSON.parse(res.stdout) as UnpackReport).placed.length).toBeGreaterThan(TINY);
  });

  it('clears the temporary files of a killed run, but never a file a catalog names, whatever its name looks like', async () => {
    const target = await TargetDepot.open(join(base, 'temps'));
    const named = `${componentDir('VCENTER')}/${TEMP_PREFIX}named.bin`;
    const junk = `${componentDir('VCENTER')}/${TEMP_PREFIX}0123456789ab-vcenter.iso`;
    await mkdir(dirname(target.path(named)), { recursive: true });
    await writeFile(target.path(named), 'a binary the catalog names');
    await writeFile(target.path(junk), 'left by a killed run');
    expect(await target.clearTemps(new Set([named]))).toEqual([junk]);
    expect(await readFile(target.path(named), 'utf8')).toBe('a binary the catalog names');
  });
});
