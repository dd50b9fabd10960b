import { createHash, randomUUID, type Hash } from 'node:crypto';
import { type FileHandle, link, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { DEPOT_PATHS, DEPOT_ROOT_DIR, PACK_FORMAT, PACK_MANIFEST_FILE, PACK_MIN_VOLUME_SIZE } from '../constants.js';
import { DepotkitError, EXIT, describeFsError, usageError } from '../util/errors.js';
import { tempPathFor } from '../util/fs.js';
import { escapeControlChars } from '../util/text.js';
import { type PackFile, type PackManifest, type PackVolume, type TreeEntry, planVolumes, volumeName } from './format.js';
import { type DepotFile, inventoryDepot, sha256Hex } from './inventory.js';
import { PositionalWriter, readChunks } from './io.js';
import { type DepotRecord, loadRecord } from './record.js';
import { releaseVersions } from './releases.js';
import { checkSealFile, checkSigningKey, packFilesIn, writePackOutputs } from './pack-outputs.js';
import { END_OF_ARCHIVE, encodeHeader, roundUpToBlock } from './tar.js';

export interface PackOptions {
  /** The depot root (the folder that contains PROD/). */
  depot: string;
  /** Where the volumes, the manifest and SHA256SUMS are written. */
  out: string;
  /** Largest volume in bytes. */
  volumeSize: number;
  /** A depot folder or an earlier pack's manifest: only what it lacks or has different is packed. */
  since?: string;
  /** Replace the files of an earlier pack in `out` (and an earlier seal file). */
  force?: boolean;
  /** An operator's ECDSA P-256 private key (PEM): the manifest's exact bytes are signed, into depot-pack.json.sig beside it. */
  signingKeyPem?: string;
  /** A file outside the media to write the seal to (it is also in the report); never inside `out`. */
  sealFile?: string;
  now?: Date;
  onStart?: (totalBytes: number) => void;
  onBytes?: (n: number) => void;
}

export interface PackReport {
  /** Every binary the catalog names was carried with the right content. */
  ok: boolean;
  depot: string;
  out: string;
  packId: string;
  delta: boolean;
  since?: { source: string; kind: DepotRecord['kind']; catalogSha256: string | null };
  volumeSize: number;
  volumes: PackVolume[];
  manifest: string;
  files: number;
  /** Bytes of file data carried (volumes add 512-byte headers and padding). */
  bytes: number;
  /** With --since: files left out because the other side has them. */
  unchanged: { files: number; bytes: number };
  /** With --since: files the other side has that this depot no longer holds (prune removes them there). */
  removed: string[];
  missing: { path: string; size: number }[];
  wrongSize: { path: string; size: number; actualSize: number }[];
  /** Binaries whose content is not the catalog's: carried but flagged, never placed by unpack. */
  wrongChecksum: { path: string; expected: string; actual: string }[];
  /** Files in component folders the catalog does not name: not carried. */
  strays: string[];
  /** With --force: files of an earlier pack that were removed from `out`. */
  replaced: string[];
  /**
   * The seal (`catalog <code> manifest <code>`): the catalog's and the
   * manifest's SHA-256 as codes a person carries apart from the media;
   * `depot unpack --expect` refuses media that do not match it.
   */
  seal: string;
  catalogSha256: string;
  manifestSha256: string;
  /** Where the seal was written, when asked. */
  sealFile?: string;
  /** The manifest's signature, when a key was given. */
  signature?: { path: string; signerSpkiSha256: string };
}

/** Metadata files up to this size are read into memory once (and hashed there, for --since); larger ones are streamed. */
const HOLD_METADATA_BYTES = 64 * 1024 * 1024;

interface Entry extends DepotFile {
  data?: Buffer;
  /** Known before writing: metadata held in memory, or a binary's catalog checksum. */
  expectedSha256?: string;
}

/** What pack needs of the depot's inventory. */
interface Source {
  root: string;
  catalogSha256: string;
  release: string;
  /** The releases its metadata describes. */
  releases: string[];
  files: DepotFile[];
  /** Each binary's checksum in the catalog, by path. */
  checksums: Map<string, string>;
  missing: PackReport['missing'];
  wrongSize: PackReport['wrongSize'];
  strays: string[];
}

/** The depot's inventory, of which only what pack needs is kept: the catalog parsed and its binaries are let go (hundreds of MB at 200,000 binaries). */
async function readSource(dir: string): Promise<Source> {
  const inventory = await inventoryDepot(dir);
  const manifestText = await readFile(join(inventory.root, DEPOT_PATHS.manifest), 'utf8').catch(() => undefined);
  return {
    root: inventory.root,
    catalogSha256: inventory.catalogSha256,
    release: inventory.release,
    releases: releaseVersions(manifestText, inventory.catalog),
    files: [...inventory.files.values()],
    checksums: new Map(inventory.binaries.map((b) => [b.path, b.checksum])),
    missing: inventory.missing.map((b) => ({ path: b.path, size: b.size })),
    wrongSize: inventory.wrongSize.map((w) => ({ path: w.binary.path, size: w.binary.size, actualSize: w.actualSize })),
    strays: inventory.strays.map((s) => s.path),
  };
}

/** Writes a depot (or what it has that another lacks) as volumes for media with size limits. */
export async function packDepot(options: PackOptions): Promise<PackReport> {
  if (!Number.isSafeInteger(options.volumeSize) || options.volumeSize < PACK_MIN_VOLUME_SIZE) {
    throw usageError(`--volume-size must be at least ${PACK_MIN_VOLUME_SIZE} bytes, not ${options.volumeSize}.`);
  }
  const inventory = await readSource(options.depot);
  const root = inventory.root;
  const out = resolve(options.out);
  if (out === root || out.startsWith(`${join(root, DEPOT_ROOT_DIR)}${sep}`) || out === join(root, DEPOT_ROOT_DIR)) {
    throw usageError(
      `--out ${out} is inside the depot's ${DEPOT_ROOT_DIR}/ folder: the pack would pack itself.`,
      'Write the pack outside the depot, e.g. on the removable medium.',
    );
  }
  const earlier = await packFilesIn(out);
  if (earlier.length > 0 && !options.force) {
    throw usageError(
      `${out} already holds a pack (${earlier.slice(0, 3).join(', ')}${earlier.length > 3 ? ', ...' : ''}).`,
      'Use --force to replace it, or choose another --out.',
    );
  }
  const since = options.since ? await loadRecord(options.since, '--since') : undefined;
  checkSigningKey(options.signingKeyPem);
  const sealFile = options.sealFile === undefined ? undefined : await checkSealFile(options.sealFile, out, options.force ?? false);

  const report: PackReport = {
    ok: false,
    depot: root,
    out,
    packId: randomUUID(),
    delta: since !== undefined,
    since: since && { source: since.source, kind: since.kind, catalogSha256: since.catalogSha256 },
    volumeSize: options.volumeSize,
    volumes: [],
    manifest: join(out, PACK_MANIFEST_FILE),
    files: 0,
    bytes: 0,
    unchanged: { files: 0, bytes: 0 },
    removed: [],
    missing: inventory.missing,
    wrongSize: inventory.wrongSize,
    wrongChecksum: [],
    strays: inventory.strays,
    replaced: [],
    seal: '',
    catalogSha256: inventory.catalogSha256,
    manifestSha256: '',
  };
  const wrongSize = new Set(report.wrongSize.map((w) => w.path));

  // What is carried, in order: the catalog and the other metadata first (what a person looks for in
  // volume 1), then the binaries by path.
  const entries: Entry[] = [];
  const tree: TreeEntry[] = [];
  const files = inventory.files.filter((f) => !wrongSize.has(f.path));
  const metadataFirst = (a: DepotFile, b: DepotFile) =>
    (a.kind === b.kind ? 0 : a.kind === 'metadata' ? -1 : 1) ||
    (a.path === DEPOT_PATHS.catalog ? -1 : b.path === DEPOT_PATHS.catalog ? 1 : a.path.localeCompare(b.path));
  for (const file of files.sort(metadataFirst)) {
    const entry: Entry = { ...file };
    if (file.kind === 'metadata' && file.size <= HOLD_METADATA_BYTES) {
      entry.data = await readFile(join(root, file.path)).catch((err: unknown) => {
        throw describeFsError(err, join(root, file.path));
      });
      entry.size = entry.data.length;
      entry.expectedSha256 = sha256Hex(entry.data);
      // The catalog carried must be the one the manifest names as the source (and the seal vouches for).
      if (file.path === DEPOT_PATHS.catalog && entry.expectedSha256 !== inventory.catalogSha256) throw changedWhilePacking(root, file.path);
    } else if (file.kind === 'binary') {
      entry.expectedSha256 = inventory.checksums.get(file.path)!;
    } else if (since) {
      // A large metadata file must be hashed to be compared: the one case of a second read.
      entry.expectedSha256 = sha256Hex(await readFile(join(root, file.path)));
    }
    const old = since?.files.get(file.path);
    if (old && entry.expectedSha256 !== undefined && old.size === entry.size && old.sha256 === entry.expectedSha256) {
      report.unchanged.files++;
      report.unchanged.bytes += entry.size;
      tree.push({ path: file.path, size: entry.size, sha256: entry.expectedSha256, kind: file.kind });
      continue;
    }
    entries.push(entry);
  }
  if (since) {
    const held = new Set(files.map((f) => f.path));
    report.removed = [...since.files.keys()].filter((p) => !held.has(p)).sort();
  }

  const plan = planVolumes(entries, options.volumeSize);
  const count = plan.length;
  await mkdir(out, { recursive: true }).catch((err: unknown) => {
    throw describeFsError(err, out);
  });
  if (options.force) {
    for (const name of earlier) await rm(join(out, name), { force: true });
    report.replaced = earlier;
  }
  const total = entries.reduce((sum, e) => sum + e.size, 0);
  options.onStart?.(total);

  // Pieces of one file follow each other across volumes: its hash and its open handle carry over.
  const packed: PackFile[] = entries.map((e) => ({ path: e.path, size: e.size, sha256: '', kind: e.kind, mtime: Math.floor(e.mtimeMs / 1000), pieces: [] }));
  const hashes = new Map<number, Hash>();
  const handles = new Map<number, FileHandle>();
  const read = new Map<number, number>();
  // A finished volume is flushed and named while the next one is written (one at a time).
  let sealing: Promise<void> = Promise.resolve();
  const written: string[] = [];
  try {
    for (const [v, volume] of plan.entries()) {
      const name = volumeName(v + 1, count);
      const final = join(out, name);
      const temp = tempPathFor(final);
      const volumeHash = createHash('sha256');
      let handle: FileHandle | undefined;
      try {
        handle = await open(temp, 'wx', 0o644);
        const writer = new PositionalWriter(handle);
        const emit = async (data: Buffer) => {
          volumeHash.update(data);
          await writer.write(data);
        };
        for (const member of volume.members) {
          const entry = entries[member.fileIndex]!;
          const file = packed[member.fileIndex]!;
          file.pieces.push({ volume: v + 1, member: member.member, fileOffset: member.fileOffset, length: member.length, dataOffset: member.dataOffset });
          await emit(encodeHeader(member.member, member.length, file.mtime));
          let hash = hashes.get(member.fileIndex);
          if (!hash) hashes.set(member.fileIndex, (hash = createHash('sha256')));
          if (entry.data) {
            const data = entry.data.subarray(member.fileOffset, member.fileOffset + member.length);
            hash.update(data);
            await emit(data);
            options.onBytes?.(data.length);
          } else {
            let source = handles.get(member.fileIndex);
            if (!source) {
              source = await open(join(root, entry.path), 'r').catch((err: unknown) => {
                throw describeFsError(err, join(root, entry.path));
              });
              handles.set(member.fileIndex, source);
            }
            let got = 0;
            for await (const chunk of readChunks(source, member.fileOffset, member.length)) {
              hash.update(chunk);
              await emit(chunk);
              got += chunk.length;
              options.onBytes?.(chunk.length);
            }
            if (got !== member.length) throw changedWhilePacking(root, entry.path);
          }
          const padding = roundUpToBlock(member.length) - member.length;
          if (padding) await emit(Buffer.alloc(padding));
          read.set(member.fileIndex, (read.get(member.fileIndex) ?? 0) + member.length);
          if (read.get(member.fileIndex) === entry.size) {
            file.sha256 = hash.digest('hex');
            hashes.delete(member.fileIndex);
            const source = handles.get(member.fileIndex);
            if (source) {
              const info = await source.stat();
              handles.delete(member.fileIndex);
              await source.close();
              if (info.size !== entry.size || info.mtimeMs !== entry.mtimeMs) throw changedWhilePacking(root, entry.path);
            }
            checkContent(entry, file, report);
          }
        }
        await emit(Buffer.alloc(END_OF_ARCHIVE));
        await writer.flush();
        if (writer.position !== volume.size)
          throw new DepotkitError(`Internal error: volume ${name} is ${writer.position} bytes, planned ${volume.size}.`, EXIT.problems);
      } catch (err) {
        await handle?.close().catch(() => undefined);
        await rm(temp, { force: true });
        throw err;
      }
      await sealing;
      const done = handle;
      // On the medium before it gets its name: a volume at a final name is whole.
      sealing = (async () => {
        try {
          await done.datasync();
          await done.close();
          await placeNew(temp, final, options.force ?? false);
          written.push(final);
        } catch (err) {
          await done.close().catch(() => undefined);
          await rm(temp, { force: true });
          throw err;
        }
      })();
      // Seen at the next await of `sealing`; until then it must not count as unhandled.
      sealing.catch(() => undefined);
      report.volumes.push({ index: v + 1, name, size: volume.size, sha256: volumeHash.digest('hex') });
    }
    await sealing;
  } catch (err) {
    await sealing.catch(() => undefined);
    // Volumes without their manifest are of no use, and would make the next run ask for --force.
    for (const path of written) await rm(path, { force: true });
    throw err;
  } finally {
    for (const h of handles.values()) await h.close().catch(() => undefined);
  }

  const flagged = new Set(report.wrongChecksum.map((w) => w.path));
  for (const file of packed) {
    if (flagged.has(file.path)) file.catalogMismatch = true;
    else tree.push({ path: file.path, size: file.size, sha256: file.sha256, kind: file.kind });
  }
  tree.sort((a, b) => a.path.localeCompare(b.path));
  const manifest: PackManifest = {
    format: PACK_FORMAT.name,
    version: PACK_FORMAT.version,
    packId: report.packId,
    created: (options.now ?? new Date()).toISOString(),
    volumeSize: options.volumeSize,
    source: { catalogSha256: inventory.catalogSha256, release: inventory.release, releases: inventory.releases },
    ...(since
      ? { since: { catalogSha256: since.catalogSha256, kind: since.kind === 'pack' ? 'pack' : 'depot', ...(since.packId ? { packId: since.packId } : {}) } }
      : {}),
    volumes: report.volumes,
    files: packed,
    tree,
    removed: report.removed,
  };
  const outputs = await writePackOutputs(out, manifest, { force: options.force ?? false, signingKeyPem: options.signingKeyPem, sealFile, now: options.now });
  Object.assign(report, outputs);

  report.files = packed.length;
  report.bytes = total;
  report.ok = report.missing.length + report.wrongSize.length + report.wrongChecksum.length === 0;
  return report;
}

function changedWhilePacking(root: string, path: string): DepotkitError {
  return new DepotkitError(
    `${join(root, path)} changed while it was being packed.`,
    EXIT.problems,
    'Pack again once nothing writes to the depot (a build or mirror under way?).',
  );
}

/** The content carried must be what the catalog (or the metadata read first) says. */
function checkContent(entry: Entry, file: PackFile, report: PackReport): void {
  if (entry.expectedSha256 === undefined || entry.expectedSha256 === file.sha256) return;
  if (entry.kind === 'binary') report.wrongChecksum.push({ path: entry.path, expected: entry.expectedSha256, actual: file.sha256 });
  else throw new DepotkitError(`${escapeControlChars(entry.path)} changed while it was being packed.`, EXIT.problems);
}

/** Renames a finished temporary file into place; without `force`, never over an existing file. */
async function placeNew(temp: string, final: string, force: boolean): Promise<void> {
  try {
    if (force) await rename(temp, final);
    else {
      await link(temp, final);
      await rm(temp, { force: true });
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw usageError(`${final} already exists.`, 'Use --force to replace it.');
    throw describeFsError(err, final);
  }
}
