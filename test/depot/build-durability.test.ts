import { realpath } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TEMP_PREFIX } from '../../src/constants.js';
import { buildDepot } from '../../src/depot/build.js';
import { CHECKPOINT_EVERY_MS, Checkpoints, VerifiedState } from '../../src/depot/place.js';
import { writeFileAtomic } from '../../src/util/fs.js';
import { type Flush, recordFlushes as startRecording } from '../helpers/flushes.js';
import { tempDir } from '../helpers/temp.js';
import { vendorLikeSource } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
let restore: (() => void) | undefined;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  dir = await realpath(dir);
});
afterEach(async () => {
  restore?.();
  restore = undefined;
  await cleanup();
});

/** Records every flush from here on; the recording ends after the test. */
async function recordFlushes(): Promise<Flush[]> {
  const recording = await startRecording();
  restore = recording.restore;
  return recording.flushes;
}

/** The index of the first flush of `path` at or after `from`, or -1. */
const flushOf = (flushes: Flush[], path: string, from = 0) => flushes.findIndex((f, i) => i >= from && f.path === path);
/** The index of the flush of the temporary file that became `final`. */
const flushOfTempFor = (flushes: Flush[], final: string) =>
  flushes.findIndex((f) => dirname(f.path) === dirname(final) && basename(f.path).startsWith(TEMP_PREFIX) && basename(f.path).endsWith(`-${basename(final)}`));

describe('renames that survive a power cut', () => {
  it('writeFileAtomic syncs the folder after the rename, and the folders it made in theirs', async () => {
    const flushes = await recordFlushes();
    const path = join(dir, 'made', 'deeper', 'file.json');
    await writeFileAtomic(path, '{}\n');
    const data = flushOfTempFor(flushes, path);
    expect(data).toBeGreaterThanOrEqual(0);
    for (const folder of [join(dir, 'made', 'deeper'), join(dir, 'made'), dir]) expect(flushOf(flushes, folder, data + 1), folder).toBeGreaterThan(data);

    // Replacing a file in a folder that exists: that folder is synced after the rename.
    const count = flushes.length;
    await writeFileAtomic(path, '{"a":1}\n', { force: true });
    const again = flushOfTempFor(flushes.slice(count), path) + count;
    expect(flushOf(flushes, join(dir, 'made', 'deeper'), again + 1)).toBeGreaterThan(again);
  });

  it('depot build syncs the folder of every binary and metadata file, and the folders above, after flushing the file', async () => {
    const src = await vendorLikeSource(dir);
    const out = join(dir, 'out');
    const flushes = await recordFlushes();
    const report = await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out });
    expect(report.ok).toBe(true);
    for (const path of [...report.placed.map((p) => p.path), ...report.metadata.written]) {
      const final = join(out, path);
      const data = flushOfTempFor(flushes, final);
      expect(data, path).toBeGreaterThanOrEqual(0);
      for (let folder = dirname(final); folder !== dir; folder = dirname(folder))
        expect(flushOf(flushes, folder, data + 1), `${folder} after ${path}`).toBeGreaterThan(data);
    }
  });
});

describe('saving the verified state of a long build', () => {
  it('saves the first file placed at once, then at most once a second whatever the number of files, and at the end', async () => {
    let saves = 0;
    const state = new (class extends VerifiedState {
      override async save(): Promise<void> {
        saves++;
      }
    })(join(dir, 'verified.json'));
    let clock = 0;
    const checkpoints = new Checkpoints(state, CHECKPOINT_EVERY_MS, () => clock);
    const placed = async (count: number) => {
      for (let i = 0; i < count; i++) {
        checkpoints.renamedInto([dir]);
        await checkpoints.maybeSave();
      }
    };
    await placed(1000);
    expect(saves).toBe(1);
    clock += CHECKPOINT_EVERY_MS - 1;
    await placed(1000);
    expect(saves).toBe(1);
    clock += 1;
    await placed(1000);
    expect(saves).toBe(2);
    await checkpoints.save();
    expect(saves).toBe(3);
  });
});
