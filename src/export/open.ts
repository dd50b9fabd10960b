import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DEPOT_PATHS } from '../constants.js';
import { normaliseOpenPrefix } from '../server/paths.js';
import { exists } from '../util/fs.js';
import type { ExportOptions } from './types.js';
import { configPath } from './values.js';

/** At most this many entries are looked at for symlinks under an open prefix. */
const SYMLINK_LOOK_LIMIT = 5000;

/** Symlinks below `dir` (itself included). */
async function symlinksUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  const queue = [dir];
  let seen = 0;
  try {
    if ((await lstat(dir)).isSymbolicLink()) return [dir];
  } catch {
    return [];
  }
  while (queue.length > 0 && seen < SYMLINK_LOOK_LIMIT) {
    const current = queue.shift()!;
    const entries = await readdir(current, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      seen++;
      if (e.isSymbolicLink()) found.push(join(current, e.name));
      else if (e.isDirectory()) queue.push(join(current, e.name));
    }
  }
  return found;
}

/**
 * The path prefixes left without auth, each written into the configuration; none without auth, where the
 * whole depot is open. What a server will make of them (missing, symlinks) is said in `warnings`.
 */
export async function openPrefixes(options: ExportOptions, root: string, warnings: string[]): Promise<string[]> {
  const prefixes = [...(options.openHcl ? [DEPOT_PATHS.hclDir] : []), ...(options.openPrefixes ?? []).map((p) => normaliseOpenPrefix(p, '`openPrefixes`'))];
  const open = [...new Set(prefixes)].map((p) => {
    configPath(`/${p}`, '`openPrefixes`');
    return p;
  });
  if (open.length > 0 && !options.auth) {
    warnings.push('`openPrefixes` and `openHcl` do nothing without auth: the whole depot is open.');
    return [];
  }
  for (const prefix of open) {
    if (!(await exists(join(root, prefix)))) warnings.push(`${prefix} does not exist under ${root} (yet); it is open once it does.`);
    const links = await symlinksUnder(join(root, prefix));
    if (links.length === 0) continue;
    const named = `${links.slice(0, 3).join(', ')}${links.length > 3 ? ` and ${links.length - 3} more` : ''}`;
    warnings.push(
      options.target === 'caddy'
        ? `${named}: symlinks under the open prefix ${prefix}, which Caddy follows without asking for credentials wherever they lead; replace them with copies.`
        : `${named}: symlinks under the open prefix ${prefix}, which the server will not follow (so that none leads into the protected tree); replace them with copies.`,
    );
  }
  return open;
}
