import { realpath, stat } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import { DEPOT_PATHS } from '../constants.js';
import { describeFsError, usageError } from '../util/errors.js';
import { normaliseOpenPrefix, resolveInsideRoot } from './paths.js';
import type { DepotServerOptions } from './types.js';

/** The realpath of the web root, which must be a folder. */
export async function realRootOf(root: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(root);
    if (!(await stat(real)).isDirectory()) throw usageError(`${root} is not a folder; serve the folder that contains PROD/.`);
  } catch (err) {
    if (err instanceof Error && err.name === 'DepotkitError') throw err;
    throw describeFsError(err, root);
  }
  return real;
}

/** The open prefixes of these options, normalised and without repeats, PROD/vsan/hcl first with `openHcl`; throws a usage error for a bad one. */
export function openPrefixesOf(opts: Pick<DepotServerOptions, 'openPrefixes' | 'openHcl'>): string[] {
  const given = [...(opts.openHcl ? [DEPOT_PATHS.hclDir] : []), ...(opts.openPrefixes ?? []).map((p) => normaliseOpenPrefix(p, '`openPrefixes`'))];
  return [...new Set(given)];
}

/** The prefixes as given and, for those that exist, as they resolve now (a prefix may be a symlink inside the root). */
export async function resolvedOpenPrefixes(realRoot: string, prefixes: string[]): Promise<string[]> {
  const all = new Set(prefixes);
  for (const prefix of prefixes) {
    const real = await resolveInsideRoot(realRoot, prefix.split('/'));
    if (real === undefined) continue;
    const rel = relative(realRoot, real).split(sep).join('/');
    // A prefix that is a symlink to the root itself would open everything, the catalog included.
    if (rel === '') throw usageError(`The open prefix ${prefix} leads to the web root itself; it would leave the whole depot without auth.`);
    all.add(rel);
  }
  return [...all];
}
