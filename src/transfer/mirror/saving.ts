import { CHECKPOINT_EVERY_MS, type Checkpoints } from '../../depot/place.js';

/** Bytes placed that are worth saving at once: re-reading them to recognise them would cost more than a save. */
const SAVE_AFTER_BYTES = 1024 ** 3;
/** Growth of the verified state that is worth a save: saves then cost a few times the final state's size in all. */
const SAVE_AFTER_GROWTH = 0.1;
/** The longest a placed file waits to be saved. */
const SAVE_AT_LEAST_EVERY_MS = 60_000;

/**
 * When to save the verified state while binaries land. The state is written
 * whole, so saving it once a second over 200,000 files would rewrite tens of
 * MB hundreds of times: a save waits until what landed since is worth it (a
 * tenth of the state in files, a GiB in bytes, or a minute), and never comes
 * sooner than a checkpoint's pace. What a killed run did not save is
 * recognised by the next run (hashed, not downloaded).
 */
export class SavePacer {
  private files = 0;
  private bytes = 0;
  private last = Date.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly checkpoints: Checkpoints,
    /** Entries the state holds already (files found in place). */
    private entries: number,
  ) {}

  /** Saves in the background while work runs. */
  start(): void {
    this.timer = setInterval(() => void this.maybeSave().catch(() => undefined), CHECKPOINT_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  placed(bytes: number): void {
    this.files++;
    this.bytes += bytes;
  }

  private due(now: number): boolean {
    if (this.files === 0 || now - this.last < CHECKPOINT_EVERY_MS) return false;
    return this.bytes >= SAVE_AFTER_BYTES || this.files >= this.entries * SAVE_AFTER_GROWTH || now - this.last >= SAVE_AT_LEAST_EVERY_MS;
  }

  private async maybeSave(): Promise<void> {
    const now = Date.now();
    if (!this.due(now)) return;
    this.entries += this.files;
    this.files = 0;
    this.bytes = 0;
    this.last = now;
    await this.checkpoints.save();
  }
}
