import { chmod, mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { DEPOT_PATHS, DEPOT_ROOT_DIR, MIRROR_PARTIAL_TAG, TEMP_PREFIX } from '../constants.js';
import { Checkpoints, VerifiedState, stateFileFor } from '../depot/place.js';
import { describeFsError } from '../util/errors.js';
import { foldersUpTo, syncDir } from '../util/fs.js';
import { listFiles } from '../util/walk.js';
import { sha256Files } from '../util/hash.js';

/**
 * The depot being written by unpack or mirror: its verified-state file (the
 * one `depot build` keeps), and the metadata held back until the binaries
 * are in place. The folders of placed files are synced and the state saved
 * in batches, at most about once a second and at the end: a killed run
 * re-hashes at most the last second's files, and a run of many small files
 * does not rewrite the whole state after each one.
 */
export class TargetDepot {
  private readonly checkpoints: Checkpoints;

  private constructor(
    readonly root: string,
    readonly state: VerifiedState,
  ) {
    this.checkpoints = new Checkpoints(state);
  }

  /** `prod` false: the depot receives ESX depots alone, and no `PROD/` is made for them. */
  static async open(dir: string, prod = true): Promise<TargetDepot> {
    const root = resolve(dir);
    try {
      await mkdir(prod ? join(root, DEPOT_ROOT_DIR) : root, { recursive: true });
    } catch (err) {
      throw describeFsError(err, root);
    }
    return new TargetDepot(root, await VerifiedState.load(stateFileFor(root)));
  }

  path(webPath: string): string {
    return join(this.root, webPath);
  }

  /** Records a file renamed into place as verified; its folders are synced and the state saved with the next batch. */
  async remember(webPath: string, sha256: string): Promise<void> {
    await this.state.remember(this.path(webPath), sha256);
    this.checkpoints.renamedInto(foldersUpTo(this.path(webPath), this.root));
    await this.checkpoints.maybeSave();
  }

  /** Syncs the folders renamed into and saves the state now. */
  save(): Promise<void> {
    return this.checkpoints.save();
  }

  async inPlace(webPath: string, sha256: string): Promise<boolean> {
    return this.state.matches(this.path(webPath), sha256);
  }

  /**
   * Temporary files of an earlier run that was killed: removed, except a
   * mirror's partial downloads, which the next mirror resumes, and any path
   * in `keep` (a file a catalog names, whatever its name looks like).
   */
  async clearTemps(keep: ReadonlySet<string> = new Set()): Promise<string[]> {
    const found = await listFiles(this.root, { dot: true, name: (name) => name.startsWith(TEMP_PREFIX) });
    const removed: string[] = [];
    for (const path of found) {
      if (basename(path).startsWith(`${TEMP_PREFIX}${MIRROR_PARTIAL_TAG}`) || keep.has(path)) continue;
      await rm(join(this.root, path), { force: true });
      removed.push(path);
    }
    return removed.sort();
  }

  /** Which files on disk already hold `sha256` (read and hashed, on every core); those are remembered. */
  async adopt(candidates: { path: string; sha256: string }[], onBytes?: (n: number) => void): Promise<Set<string>> {
    const results = await sha256Files(
      candidates.map((c) => this.path(c.path)),
      { onBytes },
    );
    const same = new Set<string>();
    for (const [i, r] of results.entries()) {
      const c = candidates[i]!;
      if (r.sha256 === c.sha256) {
        same.add(c.path);
        await this.state.remember(this.path(c.path), c.sha256);
      }
    }
    if (same.size) await this.save();
    return same;
  }

  /**
   * Moves held metadata into place: everything else first and the catalog
   * (or what `last` names) last, since the catalog is what makes a new release
   * visible to an installer; the others' renames are made durable before the catalog's.
   */
  async placeHeld(
    held: { path: string; temp: string; sha256: string }[],
    last: (path: string) => boolean = (path) => path === DEPOT_PATHS.catalog,
  ): Promise<void> {
    for (const group of [held.filter((h) => !last(h.path)), held.filter((h) => last(h.path))]) {
      const folders = new Set<string>();
      for (const h of group) {
        const final = this.path(h.path);
        await mkdir(dirname(final), { recursive: true });
        await chmod(h.temp, 0o644);
        await rename(h.temp, final);
        for (const folder of foldersUpTo(final, this.root)) folders.add(folder);
        await this.state.remember(final, h.sha256);
      }
      for (const folder of folders) await syncDir(folder);
    }
    await this.save();
  }
}
