import { createHash, type Hash } from 'node:crypto';
import { type FileHandle, chmod, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import pLimit from 'p-limit';
import { PACK_MANIFEST_FILE, PACK_SUMS_FILE } from '../constants.js';
import { type VerifyResult, verifyDepot } from '../depot/verify.js';
import { DepotkitError, EXIT, describeFsError, usageError } from '../util/errors.js';
import { isDirectory, tempPathFor } from '../util/fs.js';
import { escapeControlChars } from '../util/text.js';
import { type PackFile, type PackManifest, type PackPiece, parseManifest } from './format.js';
import { readCatalogOf, sha256Hex } from './inventory.js';
import { PositionalWriter, readChunks } from './io.js';
import { type ReleaseStatus, releaseStatus } from './releases.js';
import { TargetDepot } from './target.js';

export interface UnpackOptions {
  /** Folders holding the volumes (one per disc or drive), the manifest in at least one of them. */
  media: string[];
  /** The depot root to place the files in (made when absent). */
  out: string;
  /** Replace files that differ in a depot that is neither this pack's source nor its base. */
  force?: boolean;
  /** For the final checks: the key that signed a toolkit-made catalog. */
  signingCertPem?: string;
  onStart?: (totalBytes: number) => void;
  onBytes?: (n: number) => void;
}

export type VolumeState =
  /** Read whole; its SHA-256 is the manifest's. */
  | 'ok'
  /** Only the pieces still needed were read (checked by the files' own SHA-256). */
  | 'ranges'
  /** Holds nothing that is still needed: not read. */
  | 'not-needed'
  | 'missing'
  | 'truncated'
  | 'corrupt';

export interface VolumeReport {
  index: number;
  name: string;
  state: VolumeState;
  path?: string;
  size: number;
  actualSize?: number;
  actualSha256?: string;
}

export interface UnpackReport {
  /** Every file is in place with the manifest's content, every needed volume was whole, and verify passes. */
  ok: boolean;
  out: string;
  packId: string;
  delta: boolean;
  manifest: string;
  volumes: VolumeReport[];
  placed: { path: string; size: number }[];
  /** Already in place and verified (from the verified state, or hashed once and remembered). */
  alreadyInPlace: { path: string; size: number }[];
  failed: { path: string; size: number; reason: string; volumes: number[] }[];
  /** Binaries the pack carries flagged (their content was not the catalog's at the source): not placed. */
  flagged: string[];
  /** `placed`: the metadata went into place; `held`: not, because files are missing and the depot's own metadata was kept. */
  metadata: 'placed' | 'held' | 'unchanged';
  /** Files the pack's source no longer holds that are still here (`depotkit depot prune` lists them). */
  stale: string[];
  /** Bytes read from the volumes; and bytes of files already here that were read to be recognised. */
  bytesRead: number;
  bytesHashedInPlace: number;
  /** Temporary files of a killed run that were removed first. */
  clearedTemps: string[];
  releases: ReleaseStatus[];
  verify: VerifyResult;
}

type VolumePiece = { piece: PackPiece; sink: Sink };

/** Files flushed and renamed at once while reading goes on. */
const FILES_FINISHING = 2;

interface Found {
  manifest: PackManifest;
  path: string;
}

/** Finds the manifest among the media; several copies must be the same pack, and SHA256SUMS (when there) must vouch for it. */
async function findManifest(media: string[]): Promise<Found> {
  const copies: { path: string; text: string }[] = [];
  const sums = new Set<string>();
  for (const dir of media) {
    const text = await readFile(join(dir, PACK_MANIFEST_FILE), 'utf8').catch(() => undefined);
    if (text !== undefined) copies.push({ path: join(dir, PACK_MANIFEST_FILE), text });
    const list = await readFile(join(dir, PACK_SUMS_FILE), 'utf8').catch(() => '');
    for (const line of list.split('\n')) {
      const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line.trim());
      if (m && m[2] === PACK_MANIFEST_FILE) sums.add(m[1]!);
    }
  }
  if (copies.length === 0)
    throw usageError(
      `None of ${media.join(', ')} holds ${PACK_MANIFEST_FILE}.`,
      'Copy the manifest (and SHA256SUMS) onto every medium beside the volumes, or name the folder that has it.',
    );
  const vouched = sums.size ? copies.filter((c) => sums.has(sha256Hex(c.text))) : copies;
  if (vouched.length === 0) {
    throw new DepotkitError(
      `${copies.map((c) => c.path).join(', ')} does not match its SHA-256 in ${PACK_SUMS_FILE}: the manifest is damaged.`,
      EXIT.problems,
      'Copy it again from the pack.',
    );
  }
  const parsed = vouched.map((c) => ({ manifest: parseManifest(c.text, c.path), path: c.path }));
  const ids = new Set(parsed.map((p) => p.manifest.packId));
  if (ids.size > 1) throw usageError(`The media hold manifests of different packs (${[...ids].join(', ')}): unpack one pack at a time.`);
  return parsed[0]!;
}

async function findVolume(media: string[], name: string): Promise<{ path: string; size: number } | undefined> {
  for (const dir of media) {
    const info = await stat(join(dir, name)).catch(() => undefined);
    if (info?.isFile()) return { path: join(dir, name), size: info.size };
  }
  return undefined;
}

/** A file being written from its pieces, in order, through a temporary name. */
class Sink {
  temp: string;
  handle?: FileHandle;
  writer?: PositionalWriter;
  hash: Hash = createHash('sha256');
  written = 0;
  piecesDone = 0;
  failed?: string;

  constructor(
    readonly file: PackFile,
    final: string,
  ) {
    this.temp = tempPathFor(final);
  }

  async start(): Promise<void> {
    await mkdir(dirname(this.temp), { recursive: true });
    this.handle = await open(this.temp, 'wx', 0o644);
    this.writer = new PositionalWriter(this.handle);
  }

  async write(data: Buffer): Promise<void> {
    if (this.failed) return;
    if (!this.handle) await this.start();
    this.hash.update(data);
    this.written += data.length;
    await this.writer!.write(data);
  }

  /** Flushes and closes; true when the content is the manifest's. */
  async finish(): Promise<boolean> {
    if (!this.handle) await this.start();
    await this.writer!.flush();
    await this.handle!.datasync();
    await this.handle!.close();
    this.handle = undefined;
    await chmod(this.temp, 0o644);
    return this.written === this.file.size && this.hash.digest('hex') === this.file.sha256;
  }

  async discard(reason: string): Promise<void> {
    this.failed ??= reason;
    await this.handle?.close().catch(() => undefined);
    this.handle = undefined;
    await rm(this.temp, { force: true });
  }
}

/** Places a pack's files in a depot, checking every volume and every file on the way. */
export async function unpackDepot(options: UnpackOptions): Promise<UnpackReport> {
  if (options.media.length === 0) throw usageError('Name at least one folder holding the volumes.');
  const media = options.media.map((m) => resolve(m));
  for (const dir of media) if (!(await isDirectory(dir))) throw usageError(`${dir} is not a folder.`, 'Name the folders (mount points) that hold the volumes.');
  const { manifest, path: manifestPath } = await findManifest(media);
  const root = resolve(options.out);

  // Whose files may be replaced: this pack's source (a resumed run) or its base (a delta), else only with --force.
  const current = await readCatalogOf(root).catch(() => undefined);
  const currentSha = current ? sha256Hex(current.bytes) : undefined;
  const ours =
    currentSha !== undefined && (currentSha === manifest.source.catalogSha256 || (manifest.since !== undefined && currentSha === manifest.since.catalogSha256));
  const mayReplace = (options.force ?? false) || ours;
  // A delta alone is not a depot: it belongs on the depot it was made against.
  if (manifest.since && !ours && !options.force) {
    throw usageError(
      `${manifest.packId} is a delta made against a depot whose catalog is not the one in ${root} (${current ? 'another catalog' : 'no catalog'}): unpacked there it would not make a whole depot.`,
      'Unpack it onto the depot it was made against (the older release), or unpack the full pack of the older release first; --force unpacks it anyway.',
    );
  }
  const target = await TargetDepot.open(root);

  const clearedTemps = await target.clearTemps();
  const report: Omit<UnpackReport, 'verify' | 'releases' | 'ok'> = {
    out: target.root,
    packId: manifest.packId,
    delta: manifest.since !== undefined,
    manifest: manifestPath,
    volumes: [],
    placed: [],
    alreadyInPlace: [],
    failed: [],
    flagged: manifest.files.filter((f) => f.catalogMismatch).map((f) => f.path),
    metadata: 'unchanged',
    stale: [],
    bytesRead: 0,
    bytesHashedInPlace: 0,
    clearedTemps,
  };

  // What is already here: remembered as verified, or the same size and then hashed once.
  const needed: PackFile[] = [];
  const toHash: PackFile[] = [];
  const conflicts: string[] = [];
  for (const file of manifest.files) {
    if (file.catalogMismatch) continue;
    if (await target.inPlace(file.path, file.sha256)) {
      report.alreadyInPlace.push({ path: file.path, size: file.size });
      continue;
    }
    const info = await stat(target.path(file.path)).catch(() => undefined);
    if (info && !info.isFile()) conflicts.push(file.path);
    else if (info && info.size === file.size) toHash.push(file);
    else if (info && !mayReplace) conflicts.push(file.path);
    else needed.push(file);
  }
  if (toHash.length) {
    report.bytesHashedInPlace = toHash.reduce((s, f) => s + f.size, 0);
    const same = await target.adopt(toHash.map((f) => ({ path: f.path, sha256: f.sha256 })));
    for (const file of toHash) {
      if (same.has(file.path)) report.alreadyInPlace.push({ path: file.path, size: file.size });
      else if (mayReplace) needed.push(file);
      else conflicts.push(file.path);
    }
  }
  if (conflicts.length) {
    throw usageError(
      `${target.root} already holds different files at ${conflicts.length} of the pack's paths (${conflicts.slice(0, 3).map(escapeControlChars).join(', ')}${conflicts.length > 3 ? ', ...' : ''}), and its catalog is neither this pack's nor its base's.`,
      'Unpack into the depot the pack was made for (or an empty folder), or use --force to replace them.',
    );
  }

  options.onStart?.(needed.reduce((s, f) => s + f.size, 0));
  const sinks = new Map<PackFile, Sink>(needed.map((f) => [f, new Sink(f, target.path(f.path))]));
  const held: { path: string; temp: string; sha256: string }[] = [];
  const volumesOf = (f: PackFile) => [...new Set(f.pieces.map((p) => p.volume))];

  const fail = async (sink: Sink, reason: string) => {
    if (sink.failed) return;
    await sink.discard(reason);
    report.failed.push({ path: sink.file.path, size: sink.file.size, reason, volumes: volumesOf(sink.file) });
  };
  const complete = async (sink: Sink) => {
    if (!(await sink.finish())) {
      const volumes = volumesOf(sink.file).map((v) => manifest.volumes[v - 1]!.name);
      return fail(sink, `its content is not the manifest's (SHA-256 or size): ${volumes.join(', ')} ${volumes.length > 1 ? 'are' : 'is'} damaged`);
    }
    if (sink.file.kind === 'metadata') held.push({ path: sink.file.path, temp: sink.temp, sha256: sink.file.sha256 });
    else {
      await rename(sink.temp, target.path(sink.file.path));
      await target.remember(sink.file.path, sink.file.sha256);
      report.placed.push({ path: sink.file.path, size: sink.file.size });
    }
  };

  // A file is flushed and renamed as soon as its last byte is written, while the next ones are read.
  const finishing = new Set<Promise<void>>();
  const finishLimit = pLimit(FILES_FINISHING);
  let finishFailure: unknown;
  const pieceDone = (sink: Sink) => {
    sink.piecesDone++;
    if (sink.piecesDone !== sink.file.pieces.length) return;
    const pending: Promise<void> = finishLimit(() => complete(sink))
      .catch((err: unknown) => {
        finishFailure ??= err;
      })
      .finally(() => finishing.delete(pending));
    finishing.add(pending);
  };

  try {
    for (const volume of manifest.volumes) {
      const pieces: VolumePiece[] = [];
      let neededBytes = 0;
      let all = 0;
      for (const file of manifest.files) {
        for (const piece of file.pieces) {
          if (piece.volume !== volume.index) continue;
          all++;
          const sink = sinks.get(file);
          if (!sink || sink.failed) continue;
          pieces.push({ piece, sink });
          neededBytes += piece.length;
        }
      }
      pieces.sort((a, b) => a.piece.dataOffset - b.piece.dataOffset);
      const entry: VolumeReport = { index: volume.index, name: volume.name, state: 'not-needed', size: volume.size };
      report.volumes.push(entry);
      if (pieces.length === 0) continue;
      const found = await findVolume(media, volume.name);
      if (!found) {
        entry.state = 'missing';
        for (const { sink } of pieces) await fail(sink, `volume ${volume.name} is missing`);
        continue;
      }
      entry.path = found.path;
      entry.actualSize = found.size;
      // Mostly needed: read it all and check its own SHA-256 too; else read only what is needed.
      const whole = pieces.length === all || neededBytes * 2 >= volume.size;
      const got = await readVolume(
        found.path,
        found.size,
        pieces,
        whole,
        (n) => (report.bytesRead += n),
        (item) => pieceDone(item.sink),
        options.onBytes,
      );
      if (whole) {
        entry.actualSha256 = got.sha256;
        entry.state = found.size < volume.size ? 'truncated' : got.sha256 === volume.sha256 ? 'ok' : 'corrupt';
      } else {
        entry.state = found.size < volume.size ? 'truncated' : 'ranges';
      }
      for (const item of pieces) {
        if (!got.done.has(item) && !item.sink.failed) await fail(item.sink, `volume ${volume.name} ends early (${found.size} of ${volume.size} bytes)`);
      }
    }
    await Promise.all(finishing);
    if (finishFailure) throw finishFailure;
  } finally {
    await Promise.all(finishing);
    for (const sink of sinks.values()) if (sink.handle) await sink.discard('interrupted');
  }

  // The metadata goes in last, and over the depot's own only when everything it names came through.
  const fresh = current === undefined;
  if (held.length) {
    if (report.failed.length === 0 || fresh) {
      await target.placeHeld(held);
      report.metadata = 'placed';
      for (const h of held) report.placed.push({ path: h.path, size: manifest.files.find((f) => f.path === h.path)!.size });
    } else {
      for (const h of held) await rm(h.temp, { force: true });
      report.metadata = 'held';
    }
  }
  report.placed.sort((a, b) => a.path.localeCompare(b.path));
  await target.save();
  for (const path of manifest.removed)
    if (
      await stat(target.path(path)).then(
        () => true,
        () => false,
      )
    )
      report.stale.push(path);

  const verify = await verifyDepot(target.root, { signingCertPem: options.signingCertPem });
  const catalog = await readCatalogOf(target.root).catch(() => undefined);
  const releases = catalog ? await releaseStatus(target.root, catalog.catalog) : [];
  const badVolumes = report.volumes.some((v) => v.state === 'missing' || v.state === 'truncated' || v.state === 'corrupt');
  return { ...report, ok: report.failed.length === 0 && !badVolumes && report.flagged.length === 0 && verify.ok, releases, verify };
}

/**
 * Reads a volume and hands each needed piece's bytes to its file, in order;
 * `onPieceDone` as soon as a piece is whole. `whole`: every byte is read and
 * hashed (the volume's own check); else only the needed pieces are read, and
 * the files' hashes check them.
 */
async function readVolume(
  path: string,
  size: number,
  pieces: VolumePiece[],
  whole: boolean,
  onRead: (n: number) => void,
  onPieceDone: (item: VolumePiece) => void,
  onBytes?: (n: number) => void,
): Promise<{ sha256?: string; done: Set<VolumePiece> }> {
  const delivered = new Map<VolumePiece, number>();
  const done = new Set<VolumePiece>();
  const finish = (item: VolumePiece) => {
    done.add(item);
    onPieceDone(item);
  };
  // An empty piece (a zero-byte file) is whole before anything is read.
  for (const item of pieces) if (item.piece.length === 0) finish(item);
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    throw describeFsError(err, path);
  }
  try {
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
        await item.sink.write(chunk.subarray(start - at, end - at));
        const total = (delivered.get(item) ?? 0) + (end - start);
        delivered.set(item, total);
        onBytes?.(end - start);
        if (total === piece.length) finish(item);
      }
    };
    if (whole) {
      const hash = createHash('sha256');
      let at = 0;
      for await (const chunk of readChunks(handle, 0, size)) {
        hash.update(chunk);
        onRead(chunk.length);
        await deliver(chunk, at);
        at += chunk.length;
      }
      return { sha256: hash.digest('hex'), done };
    }
    for (const item of pieces) {
      let at = item.piece.dataOffset;
      for await (const chunk of readChunks(handle, item.piece.dataOffset, item.piece.length)) {
        onRead(chunk.length);
        await deliver(chunk, at);
        at += chunk.length;
      }
    }
    return { done };
  } finally {
    await handle.close();
  }
}
