import { constants as fsConstants, type Stats } from 'node:fs';
import { type FileHandle, lstat, open } from 'node:fs/promises';
import { join } from 'node:path';
import { fileKind } from '../../util/bounded-read.js';
import { readAt } from '../../util/chunked-io.js';
import { DepotkitError, EXIT, describeFsError } from '../../util/errors.js';

/**
 * Opening files on transfer media. The media come from outside and unpack
 * runs as root, so a name on them may be a symbolic link to a local secret, a
 * FIFO that never ends, or a device. As tar and rsync do with links, nothing
 * on the media is followed: a file is opened only when it is a regular file,
 * with O_NOFOLLOW (a link swapped in after the check fails to open) and
 * O_NONBLOCK (a FIFO swapped in does not block the open; a regular file reads
 * as ever), and checked again on the open handle.
 */
export type MediaFile =
  { state: 'absent' } | { state: 'refused'; path: string; reason: string } | { state: 'open'; path: string; handle: FileHandle; size: number };

const OPEN_FLAGS = fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK;

const notRegular = (path: string, info: Stats): MediaFile => ({ state: 'refused', path, reason: `is ${fileKind(info)}, not a regular file` });
const isAbsent = (err: unknown) => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '');

/** Opens `path` when it is a regular file; anything else at that name is refused, unread. */
export async function openMediaFile(path: string): Promise<MediaFile> {
  let before: Stats;
  try {
    before = await lstat(path);
  } catch (err) {
    if (isAbsent(err)) return { state: 'absent' };
    throw describeFsError(err, path);
  }
  if (!before.isFile()) return notRegular(path, before);
  let handle: FileHandle;
  try {
    handle = await open(path, OPEN_FLAGS);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') return { state: 'refused', path, reason: 'is a symbolic link, not a regular file' };
    if (isAbsent(err)) return { state: 'absent' };
    throw describeFsError(err, path);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) {
      await handle.close();
      return notRegular(path, info);
    }
    if (info.ino !== before.ino || info.dev !== before.dev) {
      await handle.close();
      return { state: 'refused', path, reason: 'was replaced while it was being opened' };
    }
    return { state: 'open', path, handle, size: info.size };
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw describeFsError(err, path);
  }
}

/** A volume by name, from the first folder that holds it as a regular file; else the first refusal, else absent. */
export async function openVolume(media: readonly string[], name: string): Promise<MediaFile> {
  let refused: MediaFile | undefined;
  for (const dir of media) {
    const file = await openMediaFile(join(dir, name));
    if (file.state === 'open') return file;
    if (file.state === 'refused') refused ??= file;
  }
  return refused ?? { state: 'absent' };
}

/**
 * A small file of the media read whole (the manifest, SHA256SUMS, a
 * signature): undefined when there is none; refused when it is not a regular
 * file or is larger than `maxBytes`, and any other failure to read it is an
 * error too, never taken for "absent".
 */
export async function readMediaFile(path: string, maxBytes: number, what: string): Promise<Buffer | undefined> {
  const file = await openMediaFile(path);
  if (file.state === 'absent') return undefined;
  if (file.state === 'refused')
    throw new DepotkitError(`${path} ${file.reason}: a ${what} is read only from a regular file on the media.`, EXIT.problems, 'Copy it again from the pack.');
  try {
    if (file.size > maxBytes) throw new DepotkitError(`${path} is ${file.size} bytes, more than a ${what} holds (${maxBytes}): refused.`, EXIT.problems);
    // One byte more than it said: a file still growing is refused rather than read without end.
    const data = await readAt(file.handle, 0, file.size + 1);
    if (data.length !== file.size) throw new DepotkitError(`${path} changed while it was being read: refused.`, EXIT.problems, 'Copy it again from the pack.');
    return data;
  } catch (err) {
    if (err instanceof DepotkitError) throw err;
    throw describeFsError(err, path);
  } finally {
    await file.handle.close();
  }
}
