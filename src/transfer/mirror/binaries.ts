import { dirname } from 'node:path';
import type { Checkpoints } from '../../depot/place.js';
import { unplaceableName } from '../contents.js';
import type { Connection } from './connection.js';
import { type MirroredFile, downloadBinary } from './download.js';
import { FileFailure } from './failure.js';
import type { DepotFiles, Written } from './local.js';
import { planBinaries } from './plan.js';
import { eachLimited } from '../../util/limit.js';
import type { MirrorProgress } from './report.js';
import { SavePacer } from './saving.js';

/** What a mirror records of its files as they land. */
export type FilesTally = Pick<MirrorProgress, 'downloaded' | 'alreadyInPlace' | 'failed' | 'replacedPartials' | 'bytesDownloaded' | 'bytesHashedLocally'>;

export interface MirrorFilesOptions {
  concurrency: number;
  retries: number;
  onStart?: (totalBytes: number) => void;
  onBytes?: (n: number) => void;
}

/** Every file: recognised in place, or downloaded `concurrency` at a time; one file's failure is reported, anything else ends the run. */
export async function mirrorFiles(
  conn: Connection,
  files: DepotFiles,
  checkpoints: Checkpoints,
  wanted: readonly MirroredFile[],
  report: FilesTally,
  options: MirrorFilesOptions,
): Promise<void> {
  // A name no file system takes fails its file alone; the others are mirrored.
  const placeable = wanted.filter((b) => {
    const reason = unplaceableName(b.fileName);
    if (reason) report.failed.push({ path: b.path, size: b.size, reason });
    return !reason;
  });
  const plan = await planBinaries(files.root, placeable, checkpoints, {
    inPlace: (b) => report.alreadyInPlace.push({ path: b.path, size: b.size }),
    hashed: (bytes) => (report.bytesHashedLocally += bytes),
  });
  options.onStart?.(plan.bytesToFetch);
  const pacer = new SavePacer(checkpoints, report.alreadyInPlace.length);
  const ctx = {
    conn,
    files,
    placed: async (final: string, sha256: string, written: Written, flushed: boolean) => {
      await checkpoints.state.remember(final, sha256, written);
      if (!flushed) checkpoints.flushBeforeSave(final);
      checkpoints.renamedInto([dirname(final)]);
      pacer.placed(written.size);
    },
    retries: options.retries,
    tally: report,
    onBytes: options.onBytes,
    onReplaced: (path: string, found: string) => report.replacedPartials.push({ path, found }),
  };
  pacer.start();
  try {
    await eachLimited(plan.todo.values(), options.concurrency, async (i) => {
      const b = placeable[i]!;
      try {
        const resumedFrom = await downloadBinary(ctx, b);
        report.downloaded.push({ path: b.path, size: b.size, resumedFrom });
      } catch (err) {
        if (!(err instanceof FileFailure)) throw err;
        report.failed.push({ path: b.path, size: b.size, reason: err.message });
      }
    });
  } finally {
    pacer.stop();
  }
}
