import { stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { DepotkitError, EXIT, describeFsError } from '../util/errors.js';
import { PRIVATE_KEY_MODE } from './files.js';

/** A served key its server's group reads (0640, as an exported Caddy site has it); never readable by all. */
export const GROUP_KEY_MODE = 0o640;

/** What a new file takes from the one it replaces (see {@link keptAttributes}). */
export interface KeptAttributes {
  mode?: number;
  owner?: { uid: number; gid: number };
}

async function statOrNone(path: string): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw describeFsError(err, path);
  }
}

/**
 * The owner, group and mode a file replacing `path` keeps, so that the server reading it (Caddy as its own
 * user, through the key's group) still can: a key stays 0640 when its group could read it, else 0600; a
 * certificate keeps its mode. Nothing when there is no file yet. Only root may give a file to another user,
 * or a group its user is not in: anyone else is refused before anything is written.
 */
export async function keptAttributes(path: string, kind: 'private-key' | 'public'): Promise<KeptAttributes> {
  const file = await statOrNone(path);
  if (!file) return {};
  const mode = kind === 'private-key' ? (file.mode & 0o040 ? GROUP_KEY_MODE : PRIVATE_KEY_MODE) : file.mode & 0o777;
  const uid = process.getuid?.();
  if (uid === undefined) return { mode };
  if (uid !== 0 && (file.uid !== uid || !process.getgroups!().includes(file.gid))) {
    throw new DepotkitError(
      `${path} belongs to uid ${file.uid} and gid ${file.gid}, which this process (uid ${uid}) cannot give the new file: the server may not read it then.`,
      EXIT.environment,
      "Run as root or as the file's owner, in its group.",
    );
  }
  return { mode, owner: { uid: file.uid, gid: file.gid } };
}
