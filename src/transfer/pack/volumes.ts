import { createHash, type Hash } from 'node:crypto';
import { type FileHandle, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { readChunks, PositionalWriter } from '../../util/chunked-io.js';
import { DepotkitError, EXIT, describeFsError } from '../../util/errors.js';
import { renameInto, tempPathFor, writeFailure } from '../../util/fs.js';
import { escapeControlChars } from '../../util/text.js';
import { type PackFile, type PackVolume, type PlannedMember, type PlannedVolume, volumeName } from '../format.js';
import { END_OF_ARCHIVE, encodeHeader, roundUpToBlock } from '../tar.js';
import type { Entry } from './select.js';
import { changedWhilePacking } from './source.js';

export interface Written {
  /** Every file carried, with its pieces and the SHA-256 of what was read. */
  packed: PackFile[];
  volumes: PackVolume[];
  /** Binaries whose content is not the catalog's: carried, flagged. */
  wrongChecksum: { path: string; expected: string; actual: string }[];
}

interface VolumeContext {
  root: string;
  out: string;
  force: boolean;
  onBytes?: (n: number) => void;
}

type Emit = (data: Buffer) => Promise<void>;

/**
 * The files being carried. Pieces of one file follow each other across
 * volumes: its hash and its open handle carry over from one to the next.
 */
class Carried {
  readonly packed: PackFile[];
  readonly wrongChecksum: Written['wrongChecksum'] = [];
  private readonly hashes = new Map<number, Hash>();
  private readonly handles = new Map<number, FileHandle>();
  private readonly read = new Map<number, number>();

  constructor(
    private readonly entries: readonly Entry[],
    private readonly context: VolumeContext,
  ) {
    this.packed = entries.map((e) => ({ path: e.path, size: e.size, sha256: '', kind: e.kind, mtime: Math.floor(e.mtimeMs / 1000), pieces: [] }));
  }

  /** One member: its header, its data (held, or read from the depot) and its padding. */
  async writeMember(member: PlannedMember, volume: number, emit: Emit): Promise<void> {
    const entry = this.entries[member.fileIndex]!;
    const file = this.packed[member.fileIndex]!;
    file.pieces.push({ volume, member: member.member, fileOffset: member.fileOffset, length: member.length, dataOffset: member.dataOffset });
    await emit(encodeHeader(member.member, member.length, file.mtime));
    let hash = this.hashes.get(member.fileIndex);
    if (!hash) this.hashes.set(member.fileIndex, (hash = createHash('sha256')));
    const pass = async (data: Buffer) => {
      hash.update(data);
      await emit(data);
      this.context.onBytes?.(data.length);
    };
    if (entry.data) await pass(entry.data.subarray(member.fileOffset, member.fileOffset + member.length));
    else {
      let got = 0;
      for await (const chunk of readChunks(await this.sourceOf(member.fileIndex), member.fileOffset, member.length)) {
        await pass(chunk);
        got += chunk.length;
      }
      if (got !== member.length) throw changedWhilePacking(this.context.root, entry.path);
    }
    const padding = roundUpToBlock(member.length) - member.length;
    if (padding) await emit(Buffer.alloc(padding));
    const read = (this.read.get(member.fileIndex) ?? 0) + member.length;
    this.read.set(member.fileIndex, read);
    if (read === entry.size) await this.finish(member.fileIndex, hash);
  }

  private async sourceOf(index: number): Promise<FileHandle> {
    let source = this.handles.get(index);
    if (!source) {
      const path = join(this.context.root, this.entries[index]!.path);
      source = await open(path, 'r').catch((err: unknown) => {
        throw describeFsError(err, path);
      });
      this.handles.set(index, source);
    }
    return source;
  }

  /** A file read to its end: its SHA-256, its source closed and checked unchanged, its content held to what was expected. */
  private async finish(index: number, hash: Hash): Promise<void> {
    const entry = this.entries[index]!;
    const file = this.packed[index]!;
    file.sha256 = hash.digest('hex');
    this.hashes.delete(index);
    const source = this.handles.get(index);
    if (source) {
      const info = await source.stat();
      this.handles.delete(index);
      await source.close();
      if (info.size !== entry.size || info.mtimeMs !== entry.mtimeMs) throw changedWhilePacking(this.context.root, entry.path);
    }
    // The content carried must be what the catalog or the ESX metadata (or the metadata read first) says.
    if (entry.expectedSha256 === undefined || entry.expectedSha256 === file.sha256) return;
    if (entry.kind === 'binary' || entry.kind === 'esx-vib') this.wrongChecksum.push({ path: entry.path, expected: entry.expectedSha256, actual: file.sha256 });
    else throw new DepotkitError(`${escapeControlChars(entry.path)} changed while it was being packed.`, EXIT.problems);
  }

  async close(): Promise<void> {
    for (const h of this.handles.values()) await h.close().catch(() => undefined);
  }
}

/** One volume under its temporary name, written whole; its handle is left open for the flush. */
async function writeVolume(
  temp: string,
  name: string,
  index: number,
  volume: PlannedVolume,
  carried: Carried,
): Promise<{ handle: FileHandle; sha256: string }> {
  const volumeHash = createHash('sha256');
  let handle: FileHandle | undefined;
  try {
    handle = await open(temp, 'wx', 0o644);
    const writer = new PositionalWriter(handle);
    const emit = async (data: Buffer) => {
      volumeHash.update(data);
      await writer.write(data);
    };
    for (const member of volume.members) await carried.writeMember(member, index, emit);
    await emit(Buffer.alloc(END_OF_ARCHIVE));
    await writer.flush();
    if (writer.position !== volume.size)
      throw new DepotkitError(`Internal error: volume ${name} is ${writer.position} bytes, planned ${volume.size}.`, EXIT.problems);
    return { handle, sha256: volumeHash.digest('hex') };
  } catch (err) {
    await handle?.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw err;
  }
}

/** On the medium before it gets its name: a volume at a final name is whole. Without `force`, never over an existing file. */
async function sealVolume(handle: FileHandle, temp: string, final: string, force: boolean): Promise<void> {
  try {
    await handle.datasync();
    await handle.close();
    await renameInto(temp, final, force).catch((err: unknown) => {
      throw writeFailure(err, final);
    });
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw err;
  }
}

/** Writes the volumes in order; a finished volume is flushed and named while the next one is written (one at a time). */
export async function writeVolumes(entries: readonly Entry[], plan: readonly PlannedVolume[], context: VolumeContext): Promise<Written> {
  const carried = new Carried(entries, context);
  const volumes: PackVolume[] = [];
  let sealing: Promise<void> = Promise.resolve();
  const written: string[] = [];
  try {
    for (const [v, volume] of plan.entries()) {
      const name = volumeName(v + 1, plan.length);
      const final = join(context.out, name);
      const temp = tempPathFor(final);
      const { handle, sha256 } = await writeVolume(temp, name, v + 1, volume, carried);
      await sealing;
      sealing = sealVolume(handle, temp, final, context.force).then(() => void written.push(final));
      // Seen at the next await of `sealing`; until then it must not count as unhandled.
      sealing.catch(() => undefined);
      volumes.push({ index: v + 1, name, size: volume.size, sha256 });
    }
    await sealing;
  } catch (err) {
    await sealing.catch(() => undefined);
    // Volumes without their manifest are of no use, and would make the next run ask for `force`.
    for (const path of written) await rm(path, { force: true });
    throw err;
  } finally {
    await carried.close();
  }
  return { packed: carried.packed, volumes, wrongChecksum: carried.wrongChecksum };
}
