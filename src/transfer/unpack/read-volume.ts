import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import type { PackFile, PackPiece } from '../format.js';
import { readChunks } from '../io.js';
import type { Sink } from './sinks.js';

/** A piece still needed: its bytes go to its file's sink; `delivered` counts them. */
export interface VolumePiece {
  piece: PackPiece;
  file: PackFile;
  delivered: number;
  done: boolean;
}

/** Every piece of the manifest by volume, in one pass: how many pieces each volume holds, and the needed ones. */
export function piecesByVolume(files: readonly PackFile[], needed: ReadonlySet<PackFile>): { all: Map<number, number>; needed: Map<number, VolumePiece[]> } {
  const all = new Map<number, number>();
  const byVolume = new Map<number, VolumePiece[]>();
  for (const file of files) {
    const wanted = needed.has(file);
    for (const piece of file.pieces) {
      all.set(piece.volume, (all.get(piece.volume) ?? 0) + 1);
      if (!wanted) continue;
      let list = byVolume.get(piece.volume);
      if (!list) byVolume.set(piece.volume, (list = []));
      list.push({ piece, file, delivered: 0, done: false });
    }
  }
  for (const list of byVolume.values()) list.sort((a, b) => a.piece.dataOffset - b.piece.dataOffset);
  return { all, needed: byVolume };
}

export interface ReadVolumeHooks {
  /** The file a piece's bytes are written to (made when its first byte comes). */
  sinkOf: (file: PackFile) => Sink;
  onRead: (n: number) => void;
  /** As soon as a piece is whole; reading waits for it (files waiting to be finished hold open files). */
  onPieceDone: (item: VolumePiece) => Promise<void>;
  onBytes?: (n: number) => void;
}

/**
 * Reads a volume and hands each needed piece's bytes to its file, in order.
 * `whole`: every byte up to `length` is read and hashed (the volume's own
 * check); else only the needed pieces are read, and the files' hashes check
 * them. Never more than `length` (the manifest's size of the volume) is read.
 */
export async function readVolume(
  handle: FileHandle,
  length: number,
  pieces: VolumePiece[],
  whole: boolean,
  hooks: ReadVolumeHooks,
): Promise<{ sha256?: string }> {
  const finish = async (item: VolumePiece) => {
    item.done = true;
    await hooks.onPieceDone(item);
  };
  // An empty piece (a zero-byte file) is whole before anything is read.
  for (const item of pieces) if (item.piece.length === 0) await finish(item);
  let next = 0;
  const deliver = async (chunk: Buffer, at: number) => {
    // Pieces are sorted by offset and chunks come in order: skip those already behind.
    while (next < pieces.length && pieces[next]!.piece.dataOffset + pieces[next]!.piece.length <= at) next++;
    for (let i = next; i < pieces.length; i++) {
      const item = pieces[i]!;
      const { piece } = item;
      if (piece.dataOffset >= at + chunk.length) break;
      const start = Math.max(at, piece.dataOffset);
      const end = Math.min(at + chunk.length, piece.dataOffset + piece.length);
      if (start >= end) continue;
      await hooks.sinkOf(item.file).write(chunk.subarray(start - at, end - at));
      item.delivered += end - start;
      hooks.onBytes?.(end - start);
      if (item.delivered === piece.length) await finish(item);
    }
  };
  if (whole) {
    const hash = createHash('sha256');
    let at = 0;
    for await (const chunk of readChunks(handle, 0, length)) {
      hash.update(chunk);
      hooks.onRead(chunk.length);
      await deliver(chunk, at);
      at += chunk.length;
    }
    return { sha256: hash.digest('hex') };
  }
  for (const item of pieces) {
    let at = item.piece.dataOffset;
    for await (const chunk of readChunks(handle, item.piece.dataOffset, item.piece.length)) {
      hooks.onRead(chunk.length);
      await deliver(chunk, at);
      at += chunk.length;
    }
  }
  return {};
}
