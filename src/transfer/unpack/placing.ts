import { rename } from 'node:fs/promises';
import pLimit from 'p-limit';
import type { PackFile, PackManifest, PackVolume } from '../format.js';
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
 * Reads the volumes still needed, each once and in order, and places each
 * file as soon as its last byte is written and its SHA-256 is right (the
 * catalog's for a binary, the manifest's for metadata). Metadata is held. A
 * file has a sink (a name, a hash, an open file) only while it is written.
 */
export async function placeFromVolumes(
  media: readonly string[],
  manifest: PackManifest,
  target: TargetDepot,
  needed: readonly PackFile[],
  hooks: { onBytes?: (n: number) => void } = {},
): Promise<Placing> {
  const out: Placing = { volumes: [], placed: [], failed: [], held: [], bytesRead: 0 };
  const folders = new Folders();
  const sinks = new Map<PackFile, Sink>();
  const failed = new Set<PackFile>();
  const sinkOf = (file: PackFile) => {
    let sink = sinks.get(file);
    if (!sink) sinks.set(file, (sink = new Sink(file, target.path(file.path), folders)));
    return sink;
  };

  const fail = async (file: PackFile, reason: string) => {
    if (failed.has(file)) return;
    failed.add(file);
    const sink = sinks.get(file);
    sinks.delete(file);
    await sink?.discard(reason);
    out.failed.push({ path: file.path, size: file.size, reason, volumes: volumesOf(file) });
  };
  const complete = async (file: PackFile) => {
    if (failed.has(file)) return;
    const sink = sinkOf(file);
    if (!(await sink.finish())) {
      const volumes = volumesOf(file).map((v) => manifest.volumes[v - 1]!.name);
      const what = file.kind === 'binary' ? "the catalog's" : "the manifest's";
      return fail(file, `its content is not ${what} (SHA-256 or size): ${volumes.join(', ')} ${volumes.length > 1 ? 'are' : 'is'} damaged`);
    }
    sinks.delete(file);
    if (file.kind === 'metadata') out.held.push({ path: file.path, temp: sink.temp, sha256: file.sha256, size: file.size });
    else {
      await rename(sink.temp, sink.final);
      await target.remember(file.path, file.sha256);
      out.placed.push({ path: file.path, size: file.size });
    }
  };

  // A file is flushed and renamed as soon as its last byte is written, while the next ones are read.
  const finishing = new Set<Promise<void>>();
  const finishLimit = pLimit(FILES_FINISHING);
  let finishFailure: unknown;
  const startFinishing = (file: PackFile) => {
    const pending: Promise<void> = finishLimit(() => complete(file))
      .catch((err: unknown) => {
        finishFailure ??= err;
      })
      .finally(() => finishing.delete(pending));
    finishing.add(pending);
  };
  const room = async () => {
    while (finishing.size >= FILES_WAITING) await Promise.race(finishing);
  };
  const pieceDone = async (item: VolumePiece) => {
    const sink = sinkOf(item.file);
    sink.piecesDone++;
    if (sink.piecesDone === item.file.pieces.length) startFinishing(item.file);
    await room();
  };

  const pieces = piecesByVolume(manifest.files, new Set(needed));
  try {
    // An empty file may have no piece at all: it is whole already.
    for (const file of needed) {
      if (file.pieces.length > 0) continue;
      startFinishing(file);
      await room();
    }
    for (const volume of manifest.volumes) {
      const wanted = (pieces.needed.get(volume.index) ?? []).filter((p) => !failed.has(p.file));
      const entry: VolumeReport = { index: volume.index, name: volume.name, state: 'not-needed', size: volume.size };
      out.volumes.push(entry);
      if (wanted.length === 0) continue;
      await readOne(media, volume, wanted, pieces.all.get(volume.index) ?? 0, entry, {
        fail,
        isFailed: (file) => failed.has(file),
        sinkOf,
        onPieceDone: pieceDone,
        onRead: (n) => (out.bytesRead += n),
        onBytes: hooks.onBytes,
      });
    }
    await Promise.all(finishing);
    if (finishFailure) throw finishFailure;
  } finally {
    await Promise.all(finishing);
    for (const sink of sinks.values()) if (sink.handle) await sink.discard('interrupted');
  }
  return out;
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
