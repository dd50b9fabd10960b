import type { DepotLockHolder } from '../depot/lock.js';
import type { ReleaseStatus } from '../transfer/releases.js';
import { formatBytes } from '../util/progress.js';
import { plural } from '../util/text.js';

// What the transfer commands share: the library loaded when one runs, the catalog's signing certificate, report lines.

// Libraries are imported when a command runs, so that every other command starts fast.
export const transfer = () => import('../transfer/index.js');

export async function readSigningCert(file: string | undefined): Promise<string | undefined> {
  if (!file) return undefined;
  const { readPemFile } = await import('../pki/pem.js');
  return (await readPemFile(file, ['CERTIFICATE', 'PUBLIC KEY'])).join('');
}

export function listed(label: string, items: string[], max = 20): string[] {
  if (items.length === 0) return [];
  const lines = [`${label}: ${items.length}`, ...items.slice(0, max).map((i) => `  ${i}`)];
  if (items.length > max) lines.push(`  ... and ${items.length - max} more (use --json for all)`);
  return lines;
}

export function formatReleases(releases: ReleaseStatus[]): string[] {
  return releases.map((r) =>
    r.complete
      ? `Release ${r.version}: complete (${plural(r.binaries, 'binary', 'binaries')}).`
      : `Release ${r.version}: ${r.present}/${r.binaries} binaries present; ${r.missing.length} missing (${formatBytes(r.missingBytes)}).`,
  );
}

/** A lock left by a run that is gone, taken over: said, since that run may have left work half done. */
export function tookOverLine(took: DepotLockHolder | undefined): string[] {
  return took
    ? [`The depot's lock was left by ${took.operation} (process ${took.pid} on ${took.host}, since ${took.startedAt}), which is gone: taken over.`]
    : [];
}
