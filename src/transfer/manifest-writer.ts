import { createHash } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { renameInto, syncDir, tempPathFor, writeFailure } from '../util/fs.js';

/**
 * The pack manifest written in pieces: the text is exactly what
 * `JSON.stringify(value, null, indent)` gives (indent 1 or more), but only
 * 64 KiB of it is held at a time, in strings that die young. A depot of
 * 200,000 small binaries has a manifest of over 100 MiB, which as one string
 * (and its UTF-8 copy) doubled what pack held in memory.
 */
export function* jsonChunks(value: unknown, indent: number, depth = 0): Generator<string> {
  if (value === null || typeof value !== 'object') {
    yield JSON.stringify(value) ?? 'null';
    return;
  }
  const pad = ' '.repeat(indent * (depth + 1));
  const close = ' '.repeat(indent * depth);
  if (Array.isArray(value)) {
    if (value.length === 0) return yield '[]';
    yield '[';
    for (const [i, item] of value.entries()) {
      yield `${i ? ',' : ''}\n${pad}`;
      // As JSON.stringify does: what has no JSON form is null in an array.
      yield* item === undefined || typeof item === 'function' ? ['null'] : jsonChunks(item, indent, depth + 1);
    }
    return yield `\n${close}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined && typeof v !== 'function');
  if (entries.length === 0) return yield '{}';
  yield '{';
  for (const [i, [key, item]] of entries.entries()) {
    yield `${i ? ',' : ''}\n${pad}${JSON.stringify(key)}: `;
    yield* jsonChunks(item, indent, depth + 1);
  }
  yield `\n${close}}`;
}

const FLUSH_BYTES = 64 * 1024;

/**
 * Writes `value` as indented JSON (and a newline) to `path` through a
 * temporary name, flushed and then renamed (without `force`, never over an
 * existing file); returns the SHA-256 of the bytes written.
 */
export async function writeJsonStreamed(path: string, value: unknown, indent: number, force: boolean): Promise<string> {
  const temp = tempPathFor(path);
  const hash = createHash('sha256');
  try {
    const handle = await open(temp, 'wx', 0o644);
    try {
      let pending: string[] = [];
      let size = 0;
      const flush = async () => {
        const data = Buffer.from(pending.join(''));
        pending = [];
        size = 0;
        hash.update(data);
        for (let done = 0; done < data.length;) done += (await handle.write(data, done, data.length - done)).bytesWritten;
      };
      for (const chunk of jsonChunks(value, indent)) {
        pending.push(chunk);
        size += chunk.length;
        if (size >= FLUSH_BYTES) await flush();
      }
      pending.push('\n');
      await flush();
      await handle.sync();
    } finally {
      await handle.close();
    }
    await renameInto(temp, path, force);
  } catch (err) {
    await rm(temp, { force: true });
    throw writeFailure(err, path);
  }
  await syncDir(dirname(path));
  return hash.digest('hex');
}
