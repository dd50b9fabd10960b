import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type yauzl from 'yauzl';
import { describeFsError, usageError } from '../util/errors.js';
import { readFileBounded } from '../util/fs.js';
import { sha256Files } from '../util/hash.js';
import { METADATA_LIMITS } from '../util/limits.js';
import { listFiles } from '../util/walk.js';
import { openEntryStream, openZipFile, readEntryData, walkZip } from '../util/zip.js';

/** Where an ESX depot's files are read from: a folder, or an offline bundle (`*-depot.zip`). */
export interface EsxSource {
  /** The folder or zip as given, for messages. */
  label: string;
  kind: 'folder' | 'bundle';
  /** A file's bytes (at most `maxBytes`, else an error), or undefined when it is not there. */
  read(path: string, maxBytes: number): Promise<Buffer | undefined>;
  /** A file's size; undefined when it is not there, null when it is but its size was not told (a HEAD answered without Content-Length). */
  size(path: string): Promise<number | null | undefined>;
  /** SHA-256 of each file, undefined for one that cannot be read. */
  sha256(paths: readonly string[], onBytes?: (n: number) => void): Promise<Map<string, string | undefined>>;
  /** A file's bytes as a stream, for what is too large to hold. */
  stream(path: string): Promise<AsyncIterable<Buffer>>;
  /** Every file, depot-relative. */
  files(): Promise<string[]>;
  close(): void;
}

/** Offline bundles hold a few thousand VIBs at most; the central directory is capped far above. */
const BUNDLE_LIMITS = { ...METADATA_LIMITS, maxEntries: 200_000 } as const;

export function folderSource(dir: string): EsxSource {
  const root = resolve(dir);
  const sizeOf = async (path: string): Promise<number | undefined> => {
    try {
      const info = await stat(join(root, path));
      return info.isFile() ? info.size : undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
      throw describeFsError(err, join(root, path));
    }
  };
  return {
    label: dir,
    kind: 'folder',
    size: sizeOf,
    read: async (path, maxBytes) => ((await sizeOf(path)) === undefined ? undefined : readFileBounded(join(root, path), maxBytes, `file of an ESX depot`)),
    sha256: async (paths, onBytes) => {
      const results = await sha256Files(
        paths.map((p) => join(root, p)),
        { onBytes },
      );
      return new Map(results.map((r, i) => [paths[i]!, r.sha256]));
    },
    stream: async (path) => createReadStream(join(root, path)),
    files: () => listFiles(root),
    close: () => undefined,
  };
}

/** An offline bundle, its central directory walked within the metadata archive's limits before anything is read. */
export async function bundleSource(path: string): Promise<EsxSource> {
  const { zip, bytes } = await openZipFile(path, 'Download the offline bundle again.');
  const entries = new Map<string, yauzl.Entry>();
  try {
    const walk = await walkZip(zip, { label: path, bytes }, BUNDLE_LIMITS, 'it is not an ESX offline bundle', (name) => ({ name, hold: false }));
    for (const { entry, name } of walk.files) entries.set(name, entry);
  } catch (err) {
    zip.close();
    throw err;
  }
  const hashEntry = async (entry: yauzl.Entry, onBytes?: (n: number) => void): Promise<string | undefined> => {
    try {
      const hash = createHash('sha256');
      const stream = await openEntryStream(zip, entry);
      stream.on('data', (chunk: Buffer) => onBytes?.(chunk.length));
      await pipeline(stream, hash);
      return hash.digest('hex');
    } catch {
      return undefined;
    }
  };
  return {
    label: path,
    kind: 'bundle',
    size: async (name) => entries.get(name)?.uncompressedSize,
    read: async (name, maxBytes) => {
      const entry = entries.get(name);
      if (!entry) return undefined;
      if (entry.uncompressedSize > maxBytes)
        throw usageError(`${path} holds ${name} of ${entry.uncompressedSize} bytes, more than an ESX depot's file of its kind.`);
      return readEntryData(zip, entry);
    },
    sha256: async (names, onBytes) => {
      const digests = new Map<string, string | undefined>();
      for (const name of names) {
        const entry = entries.get(name);
        digests.set(name, entry ? await hashEntry(entry, onBytes) : undefined);
      }
      return digests;
    },
    stream: async (name) => {
      const entry = entries.get(name);
      if (!entry) throw usageError(`${path} holds no ${name}.`);
      return (await openEntryStream(zip, entry)) as AsyncIterable<Buffer> & NodeJS.ReadableStream;
    },
    files: async () => [...entries.keys()],
    close: () => zip.close(),
  };
}
