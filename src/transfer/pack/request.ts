import { join, resolve, sep } from 'node:path';
import { DEPOT_ROOT_DIR, PACK_MIN_VOLUME_SIZE } from '../../constants.js';
import { usageError } from '../../util/errors.js';
import { formatBytes } from '../../util/progress.js';
import { type DepotRecord, loadRecord } from '../record.js';
import { checkSealFile, checkSigningKey, packFilesIn } from './outputs.js';

/** What pack was asked, checked before anything is read from the depot's files or written. */
export interface Request {
  out: string;
  /** Files of an earlier pack in `out` (replaced only with `force`). */
  earlier: string[];
  since?: DepotRecord;
  sealFile?: string;
}

export function checkVolumeSize(volumeSize: number): void {
  if (!Number.isSafeInteger(volumeSize) || volumeSize < PACK_MIN_VOLUME_SIZE) {
    throw usageError(`\`volumeSize\` must be at least ${PACK_MIN_VOLUME_SIZE} bytes (${formatBytes(PACK_MIN_VOLUME_SIZE)}), not ${volumeSize}.`);
  }
}

/** The output folder, the base of a delta, the signing key and the seal file, each refused before anything is written. */
export async function checkRequest(
  root: string,
  options: { out: string; since?: string; force?: boolean; signingKeyPem?: string; sealFile?: string },
): Promise<Request> {
  const out = resolve(options.out);
  const prod = join(root, DEPOT_ROOT_DIR);
  if (out === root || out === prod || out.startsWith(`${prod}${sep}`)) {
    throw usageError(
      `The pack's folder ${out} is inside the depot's ${DEPOT_ROOT_DIR}/ folder: the pack would pack itself.`,
      'Write the pack outside the depot, e.g. on the removable medium.',
    );
  }
  const earlier = await packFilesIn(out);
  if (earlier.length > 0 && !options.force) {
    throw usageError(
      `${out} already holds a pack (${earlier.slice(0, 3).join(', ')}${earlier.length > 3 ? ', ...' : ''}).`,
      'Use `force` to replace it, or choose another `out`.',
    );
  }
  const since = options.since ? await loadRecord(options.since, '`since`') : undefined;
  checkSigningKey(options.signingKeyPem);
  const sealFile = options.sealFile === undefined ? undefined : await checkSealFile(options.sealFile, out, options.force ?? false);
  return { out, earlier, ...(since ? { since } : {}), ...(sealFile ? { sealFile } : {}) };
}
