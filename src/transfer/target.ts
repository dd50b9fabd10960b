import { chmod, mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import fg from 'fast-glob';
import { DEPOT_PATHS, DEPOT_ROOT_DIR, MIRROR_PARTIAL_TAG, TEMP_PREFIX } from '../constants.js';
import { VerifiedState, stateFileFor } from '../depot/place.js';
import { describeFsError } from '../util/errors.js';
import { sha256Files } from '../util/hash.js';

/**
 * The depot being written by unpack or mirror: its verified-state file (the
 * one `depot build` keeps), saved after every file so that a killed run loses
 * at most the file under way, and the metadata held back until the binaries
 * are in place.
 */
export class TargetDepot {
  private saving: Promise<void> = Promise.resolve();

  private constructor(
    readonly root: string,
    readonly state: VerifiedState,
  ) {}

  static async open(dir: string): Promise<TargetDepot> {
    const root = resolve(dir);
    try {
      await mkdir(join(root, DEPOT_ROOT_DIR), { recursive: true });
    } catch (err) {
      throw describeFsError(err, root);
    }
    return new TargetDepot(root, await VerifiedState.load(stateFileFor(root)));
  }

  path(webPath: string): string {
    return join(this.root, webPath);
  }

  /** Records a placed file as verified and saves the state (saves run one at a time, in order). */
  async remember(webPath: string, sha256: string): Promise<void> {
    await this.state.remember(this.path(webPath), sha256);
    await this.save();
  }

  save(): Promise<void> {
    const next = this.saving.then(() => this.state.save());
    this.saving = next.catch(() => undefined);
    return next;
  }

  async inPlace(webPath: string, sha256: string): Promise<boolean> {
    return this.state.matches(this.path(webPath), sha256);
  }

  /**
   * Temporary files of an earlier run that was killed: removed, except a
   * mirror's partial downloads, which the next mirror resumes.
   */
  async clearTemps(): Promise<string[]> {
    const found = await fg(`**/${TEMP_PREFIX}*`, { cwd: this.root, dot: true, onlyFiles: true, suppressErrors: true });
    const removed: string[] = [];
    for (const path of found) {
      if (basename(path).startsWith(`${TEMP_PREFIX}${MIRROR_PARTIAL_TAG}`)) continue;
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
   * last, since the catalog is what makes a new release visible to an
   * installer.
   */
  async placeHeld(held: { path: string; temp: string; sha256: string }[]): Promise<void> {
    const ordered = [...held].sort((a, b) => Number(a.path === DEPOT_PATHS.catalog) - Number(b.path === DEPOT_PATHS.catalog));
    for (const h of ordered) {
      const final = this.path(h.path);
      await mkdir(dirname(final), { recursive: true });
      await chmod(h.temp, 0o644);
      await rename(h.temp, final);
      await this.remember(h.path, h.sha256);
    }
  }
}
