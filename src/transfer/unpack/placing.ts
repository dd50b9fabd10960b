import { rename, rm } from 'node:fs/promises';
import { limiter } from '../../util/limit.js';
import { type PackFile, type PackManifest, type PackVolume, isMetadataKind } from '../format.js';
import type { TargetDepot } from '../target.js';
import { openVolume } from './media.js';
import { type ReadVolumeHooks, type VolumePiece, piecesByVolume, readVolume } from './read-volume.js';
import { Folders, Sink } from './sinks.js';

export type VolumeState =
  /** Read whole; its SHA-256 is the manifest's. */
  | 'ok'
  /** Only the pieces still needed were read (checked by the files' own SHA-256). */
  | 'ranges'
  /** Holds nothing that is still needed: not read. */
  | 'not-needed'
  | 'missing'
  /** Not a regular file on the media (a symbolic link, a FIFO, a device...): not read. */
  | 'refused'
  | 'truncated'
  /** Its SHA-256 or its size is not the manifest's. */
  | 'corrupt';

export interface VolumeReport {
  index: number;
  name: string;
  state: VolumeState;
  path?: string;
  size: number;
  actualSize?: number;
  actualSha256?: string;
  /** Why it was refused. */
  reason?: string;
}

export interface FailedFile {
  path: string;
  size: number;
  reason: string;
  volumes: number[];
}

/** Metadata written under a temporary name, held back until the binaries are in place. */
export interface Held {
  path: string;
  temp: string;
  sha256: string;
  size: number;
}

export interface Placing {
  volumes: VolumeReport[];
  placed: { path: string; size: number }[];
  failed: FailedFile[];
  held: Held[];
  bytesRead: number;
}

/** Files flushed and renamed at once while reading goes on. */
const FILES_FINISHING = 2;
/**
 * Files whose bytes are all written, waiting to be flushed and renamed, at
 * most: each holds an open file, and a volume of many small files is read far
 * faster than they are flushed (200,000 of them ran out of file descriptors).
 */
const FILES_WAITING = 64;

export const volumesOf = (f: PackFile): number[] => [...new Set(f.pieces.map((p) => p.volume))];

/**
 * The files being placed. A file has a sink (a name, a hash, an open file)
 * only while it is written; it is flushed and renamed as soon as its last
 * byte is written, while the next ones are read.
 */
class Placer {
  readonly out: Placing = { volumes: [], placed: [], failed: [], held: [], bytesRead: 0 };
  readonly failed = new Set<PackFile>();
  private readonly folders = new Folders();
  private readonly sinks = new Map<PackFile, Sink>();
  private readonly finishing = new Set<Promise<void>>();
  private readonly finishLimit = limiter(FILES_FINISHING);
  private finishFailure: unknown;

  constructor(
    private readonly manifest: PackManifest,
    private readonly target: TargetDepot,
  ) {}

  readonly sinkOf = (file: PackFile): Sink => {
    let sink = this.sinks.get(file);
    if (!sink) this.sinks.set(file, (sink = new Sink(file, this.target.path(file.path), this.folders)));
    return sink;
  };

  readonly fail = async (file: PackFile, reason: string): Promise<void> => {
    if (this.failed.has(file)) return;
    this.failed.add(file);
    const sink = this.sinks.get(file);
    this.sinks.delete(file);
    await sink?.discard(reason);
    this.out.failed.push({ path: file.path, size: file.size, reason, volumes: volumesOf(file) });
  };

  /** A file whose bytes are all written: placed when its SHA-256 is right (metadata held back), else failed. */
  private async complete(file: PackFile): Promise<void> {
    if (this.failed.has(file)) return;
    const sink = this.sinkOf(file);
    if (!(await sink.finish())) {
      const volumes = volumesOf(file).map((v) => this.manifest.volumes[v - 1]!.name);
      const what = file.kind === 'binary' ? "the catalog's" : file.kind === 'esx-vib' ? "its metadata's" : "the manifest's";
      return this.fail(file, `its content is not ${what} (SHA-256 or size): ${volumes.join(', ')} ${volumes.length > 1 ? 'are' : 'is'} damaged`);
    }
    this.sinks.delete(file);
    if (isMetadataKind(file.kind)) this.out.held.push({ path: file.path, temp: sink.temp, sha256: file.sha256, size: file.size });
    else {
      await rename(sink.temp, sink.final);
      await this.target.remember(file.path, file.sha256);
      this.out.placed.push({ path: file.path, size: file.size });
    }
  }

  /** Flushes and renames `file` in the background, then waits while too many files wait to be. */
  readonly finishSoon = async (file: PackFile): Promise<void> => {
    this.startFinishing(file);
    await this.room();
  };

  readonly pieceDone = async (item: VolumePiece): Promise<void> => {
    const sink = this.sinkOf(item.file);
    sink.piecesDone++;
    if (sink.piecesDone === item.file.pieces.length) this.startFinishing(item.file);
    await this.room();
  };

  private startFinishing(file: PackFile): void {
    const pending: Promise<void> = this.finishLimit(() => this.complete(file))
      .catch((err: unknown) => {
        this.finishFailure ??= err;
      })
      .finally(() => this.finishing.delete(pending));
    this.finishing.add(pending);
  }

  private async room(): Promise<void> {
    while (this.finishing.size >= FILES_WAITING) await Promise.race(this.finishing);
  }

  /** Waits for every file being finished; the first failure ends the run. */
  async settle(): Promise<void> {
    await Promise.all(this.finishing);
    if (this.finishFailure) throw this.finishFailure;
  }

  /** What an interrupted run leaves: no open file, no half-written temporary file. */
  async close(): Promise<void> {
    await Promise.all(this.finishing);
    for (const sink of this.sinks.values()) if (sink.handle) await sink.discard('interrupted');
  }
}

/**
 * Reads the volumes still needed, each once and in order, and places each
 * file as soon as its last byte is written and its SHA-256 is right (the
 * catalog's for a binary, the manifest's for metadata). Metadata is held.
 */
export async function placeFromVolumes(
  media: readonly string[],
  manifest: PackManifest,
  target: TargetDepot,
  needed: readonly PackFile[],
  hooks: { onBytes?: (n: number) => void } = {},
): Promise<Placing> {
  const placer = new Placer(manifest, target);
  const pieces = piecesByVolume(manifest.files, new Set(needed));
  try {
    // An empty file may have no piece at all: it is whole already.
    for (const file of needed) if (file.pieces.length === 0) await placer.finishSoon(file);
    for (const volume of manifest.volumes) {
      const wanted = (pieces.needed.get(volume.index) ?? []).filter((p) => !placer.failed.has(p.file));
      const entry: VolumeReport = { index: volume.index, name: volume.name, state: 'not-needed', size: volume.size };
      placer.out.volumes.push(entry);
      if (wanted.length === 0) continue;
      await readOne(media, volume, wanted, pieces.all.get(volume.index) ?? 0, entry, {
        fail: placer.fail,
        isFailed: (file) => placer.failed.has(file),
        sinkOf: placer.sinkOf,
        onPieceDone: placer.pieceDone,
        onRead: (n) => (placer.out.bytesRead += n),
        onBytes: hooks.onBytes,
      });
    }
    await placer.settle();
  } finally {
    await placer.close();
  }
  return placer.out;
}

interface VolumeHooks extends ReadVolumeHooks {
  fail: (file: PackFile, reason: string) => Promise<void>;
  isFailed: (file: PackFile) => boolean;
}

/** One volume: found and opened as a regular file, read (whole, or the pieces still needed), and judged. */
async function readOne(
  media: readonly string[],
  volume: PackVolume,
  pieces: VolumePiece[],
  all: number,
  entry: VolumeReport,
  hooks: VolumeHooks,
): Promise<void> {
  const found = await openVolume(media, volume.name);
  if (found.state === 'absent') {
    entry.state = 'missing';
    for (const { file } of pieces) await hooks.fail(file, `volume ${volume.name} is missing`);
    return;
  }
  entry.path = found.path;
  if (found.state === 'refused') {
    entry.state = 'refused';
    entry.reason = found.reason;
    for (const { file } of pieces) await hooks.fail(file, `volume ${volume.name} was not read: ${found.path} ${found.reason}`);
    return;
  }
  try {
    entry.actualSize = found.size;
    const neededBytes = pieces.reduce((s, p) => s + p.piece.length, 0);
    // Mostly needed: read it all and check its own SHA-256 too; else read only what is needed.
    const whole = pieces.length === all || neededBytes * 2 >= volume.size;
    const got = await readVolume(found.handle, Math.min(found.size, volume.size), pieces, whole, hooks);
    if (found.size < volume.size) entry.state = 'truncated';
    else if (found.size > volume.size) entry.state = 'corrupt';
    else if (whole) {
      entry.actualSha256 = got.sha256;
      entry.state = got.sha256 === volume.sha256 ? 'ok' : 'corrupt';
    } else entry.state = 'ranges';
    for (const item of pieces) {
      if (!item.done && !hooks.isFailed(item.file)) await hooks.fail(item.file, `volume ${volume.name} ends early (${found.size} of ${volume.size} bytes)`);
    }
  } finally {
    await found.handle.close();
  }
}

/**
 * The metadata goes in last, and over the depot's own only when everything it
 * names came through; into a depot that had none it goes anyway, so that
 * verify can say exactly what is missing. `last`: the files that make it
 * visible (the catalog; an ESX depot's root index), renamed after the others.
 */
export async function placeMetadata(
  target: TargetDepot,
  held: Held[],
  place: boolean,
  last?: (path: string) => boolean,
): Promise<'placed' | 'held' | 'unchanged'> {
  if (held.length === 0) return 'unchanged';
  if (place) {
    await target.placeHeld(held, last);
    return 'placed';
  }
  for (const h of held) await rm(h.temp, { force: true });
  return 'held';
}
