import yauzl from 'yauzl';
import { open as openFile } from 'node:fs/promises';
import { inflateRawSync } from 'node:zlib';
import { describeFsError, usageError } from './errors.js';
import { escapeControlChars, formatBytes, hasControlChars } from './text.js';

// yauzl's callbacks as promises, for the readers of zip archives (the vendor's metadata archive,
// ESX metadata zips and offline bundles): entries are walked lazily, so that a hostile central
// directory is judged entry by entry before anything is decompressed.

/** Opens a zip file, or one held in memory, for a walk of its entries. */
export function openZip(source: string | Buffer): Promise<yauzl.ZipFile> {
  // autoClose off: the entries are read after the whole central directory has been checked.
  const options = { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false };
  return new Promise((resolvePromise, reject) => {
    const done = (err: Error | null, zip: yauzl.ZipFile) => (err ? reject(err) : resolvePromise(zip));
    if (typeof source === 'string') yauzl.open(source, options, done);
    else yauzl.fromBuffer(source, options, done);
  });
}

/**
 * A zip file opened for a walk, with its size: a missing or unreadable file is said as the file
 * system says it, before yauzl's generic words; a file that is no zip gets `fix` (what to do).
 */
export async function openZipFile(path: string, fix: string): Promise<{ zip: yauzl.ZipFile; bytes: number }> {
  let bytes: number;
  try {
    const handle = await openFile(path, 'r');
    bytes = (await handle.stat()).size;
    await handle.close();
  } catch (err) {
    throw describeFsError(err, path);
  }
  try {
    return { zip: await openZip(path), bytes };
  } catch (err) {
    throw usageError(`${path} is not a readable zip archive (${(err as Error).message}).`, fix);
  }
}

/** The next entry of the central directory, or undefined at its end. */
export function nextEntry(zip: yauzl.ZipFile): Promise<yauzl.Entry | undefined> {
  return new Promise((resolvePromise, reject) => {
    const cleanup = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (entry: yauzl.Entry) => (cleanup(), resolvePromise(entry));
    const onEnd = () => (cleanup(), resolvePromise(undefined));
    const onError = (err: Error) => (cleanup(), reject(err));
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}

/** Deflate, the one compression method besides none that zips here use. */
const DEFLATE = 8;
/** Entries up to this size are inflated on the spot: about a millisecond's work. */
const INFLATE_HERE_BYTES = 1024 * 1024;

/** An entry's bytes, whole. */
export function readEntryData(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Buffer> {
  // A small deflated entry is inflated here at once: a metadata zip is thousands of small documents, and a
  // hop through zlib's stream and libuv's threads for each cost more than inflating it.
  const inflateHere = entry.compressionMethod === DEFLATE && entry.uncompressedSize <= INFLATE_HERE_BYTES;
  return new Promise((resolvePromise, reject) => {
    zip.openReadStream(entry, inflateHere ? { decompress: false } : {}, (err, stream) => {
      if (err) return reject(err);
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', reject);
      stream.on('end', () => {
        if (!inflateHere) return resolvePromise(Buffer.concat(chunks));
        try {
          // Bounded by the size the directory declares (which the walk held to its limits), and held to it exactly, as yauzl's stream does.
          const data = inflateRawSync(Buffer.concat(chunks), { maxOutputLength: Math.max(1, entry.uncompressedSize) });
          if (data.length !== entry.uncompressedSize) throw new Error(`expected ${entry.uncompressedSize} bytes, got ${data.length}`);
          resolvePromise(data);
        } catch (inflateErr) {
          reject(new Error(`${entry.fileName} does not inflate to its declared size (${(inflateErr as Error).message})`));
        }
      });
    });
  });
}

/** The entry's bytes as a stream, for what is too large to hold (an offline bundle's VIBs). */
export function openEntryStream(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<NodeJS.ReadableStream> {
  return new Promise((resolvePromise, reject) => {
    zip.openReadStream(entry, (err, stream) => (err ? reject(err) : resolvePromise(stream)));
  });
}

export interface ZipLimits {
  /** Entries in the central directory. */
  maxEntries: number;
  /** Bytes of the entries held in memory, uncompressed. */
  maxTotalBytes: number;
  /** Uncompressed to compressed size, per entry and for the whole archive. */
  maxCompressionRatio: number;
  /** Entries smaller than this are not held to the ratio. */
  ratioExemptBytes: number;
}

/** What the walk keeps of an entry: the name it goes by, and whether its bytes will be held in memory. */
export interface KeptEntry {
  entry: yauzl.Entry;
  name: string;
  hold: boolean;
}

export interface ZipWalk {
  files: KeptEntry[];
  /** Folder entries kept, by the name `select` gave them. */
  folders: string[];
}

/**
 * Walks a whole central directory before anything is decompressed, refusing an archive that is
 * not what it claims (`notWhat` ends each sentence): too many entries, a name with control
 * characters, one file twice, held entries larger than the cap, or an entry (or the whole) compressed
 * past the ratio a zip bomb needs. `select` maps each name to what is kept of it, or undefined to skip it;
 * it may throw to refuse the archive.
 */
export async function walkZip(
  zip: yauzl.ZipFile,
  archive: { label: string; bytes: number },
  limits: ZipLimits,
  notWhat: string,
  select: (name: string) => { name: string; hold: boolean } | undefined,
): Promise<ZipWalk> {
  const { label } = archive;
  // The count is in the end record: a huge central directory is not even walked.
  if (zip.entryCount > limits.maxEntries) {
    throw usageError(`${label} holds ${zip.entryCount} entries, more than the ${limits.maxEntries} depotkit reads: ${notWhat}.`);
  }
  const walk: ZipWalk = { files: [], folders: [] };
  const byName = new Map<string, string>();
  let held = 0;
  let total = 0;
  for (let entry = await nextEntry(zip); entry; entry = await nextEntry(zip)) {
    // yauzl has already refused absolute paths, backslashes and `..` in entry names.
    const raw = entry.fileName;
    if (hasControlChars(raw)) throw usageError(`${label} holds an entry whose name has control characters ("${escapeControlChars(raw)}"): ${notWhat}.`);
    const kept = select(raw);
    if (!kept) continue;
    if (raw.endsWith('/')) {
      walk.folders.push(kept.name);
      continue;
    }
    // Two copies of one file may differ: which one would be used is a guess.
    const twice = byName.get(kept.name);
    if (twice !== undefined) throw usageError(`${label} holds ${kept.name} twice${twice !== raw ? ` (as ${twice} and ${raw})` : ''}: ${notWhat}.`);
    byName.set(kept.name, raw);
    total += entry.uncompressedSize;
    if (kept.hold) {
      held += entry.uncompressedSize;
      if (held > limits.maxTotalBytes) throw usageError(`${label} unpacks to more than ${formatBytes(limits.maxTotalBytes)}: ${notWhat}.`);
    }
    const ratio = entry.uncompressedSize / Math.max(1, entry.compressedSize);
    if (entry.uncompressedSize >= limits.ratioExemptBytes && ratio > limits.maxCompressionRatio) {
      throw usageError(`${label} holds ${raw}, compressed ${Math.round(ratio)} to 1 (more than ${limits.maxCompressionRatio}): a zip bomb, ${notWhat}.`);
    }
    walk.files.push({ entry, name: kept.name, hold: kept.hold });
  }
  // Entries sharing their compressed data (an overlapping zip bomb) each look harmless alone.
  if (total >= limits.ratioExemptBytes && total / Math.max(1, archive.bytes) > limits.maxCompressionRatio) {
    throw usageError(
      `${label} unpacks to ${formatBytes(total)} from ${formatBytes(archive.bytes)} (more than ${limits.maxCompressionRatio} to 1): a zip bomb, ${notWhat}.`,
    );
  }
  return walk;
}
