import { DepotkitError, describeFsError, isEnvironmentError } from '../../util/errors.js';

/** This file cannot be mirrored now (the others go on); `cause: 'content'` when its bytes are wrong. */
export class FileFailure extends Error {}

/**
 * Local errors that are about one file's name or place (a name too long for
 * the file system, a folder where the file goes): that file fails, the
 * mirror goes on. Anything else (a full disk, a read-only file system) ends
 * the run, in one sentence.
 */
const ONE_FILE_CODES = new Set(['ENAMETOOLONG', 'EISDIR', 'ENOTDIR', 'ENOTEMPTY', 'EEXIST', 'ELOOP', 'EINVAL']);

export function localFailure(err: unknown, path: string): Error {
  if (err instanceof FileFailure || err instanceof DepotkitError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  if (!isEnvironmentError(err) && code !== undefined && ONE_FILE_CODES.has(code)) {
    const why =
      code === 'ENAMETOOLONG' ? 'its path is longer than the file system allows' : `it cannot be written at ${path} (${code}: ${(err as Error).message})`;
    return new FileFailure(why);
  }
  return describeFsError(err, path);
}
