import { createHash, type Hash } from 'node:crypto';
import { type FileHandle, mkdir, open, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { tempPathFor } from '../../util/fs.js';
import type { PackFile } from '../format.js';
import { PositionalWriter } from '../io.js';

/** Folders already made in this run: one mkdir per folder, not per file. */
export class Folders {
  private made = new Set<string>();

  async make(dir: string): Promise<void> {
    if (this.made.has(dir)) return;
    await mkdir(dir, { recursive: true });
    this.made.add(dir);
  }
}

/**
 * A file being written from its pieces, in order, through a temporary name
 * beside its final path. Its hash and handle are made when its first byte
 * comes, so that many files waiting cost little memory.
 */
export class Sink {
  readonly temp: string;
  handle?: FileHandle;
  private writer?: PositionalWriter;
  private hash?: Hash;
  written = 0;
  piecesDone = 0;
  failed?: string;
  /** Whether the temporary file was made (a file that failed before its first byte has none to remove). */
  private started = false;

  constructor(
    readonly file: PackFile,
    readonly final: string,
    private readonly folders: Folders,
  ) {
    this.temp = tempPathFor(final);
  }

  private async start(): Promise<void> {
    await this.folders.make(dirname(this.temp));
    this.started = true;
    this.handle = await open(this.temp, 'wx', 0o644);
    this.writer = new PositionalWriter(this.handle);
    this.hash = createHash('sha256');
  }

  async write(data: Buffer): Promise<void> {
    if (this.failed) return;
    if (!this.handle) await this.start();
    this.hash!.update(data);
    this.written += data.length;
    await this.writer!.write(data);
  }

  /** Flushes and closes; true when the content is the expected one (the catalog's for a binary, else the manifest's). */
  async finish(): Promise<boolean> {
    if (!this.handle) await this.start();
    await this.writer!.flush();
    // The umask may have narrowed the mode: a web server running as another user must read the file.
    await this.handle!.chmod(0o644);
    await this.handle!.datasync();
    await this.handle!.close();
    this.handle = undefined;
    return this.written === this.file.size && this.hash!.digest('hex') === this.file.sha256;
  }

  async discard(reason: string): Promise<void> {
    this.failed ??= reason;
    await this.handle?.close().catch(() => undefined);
    this.handle = undefined;
    if (this.started) await rm(this.temp, { force: true });
  }
}
