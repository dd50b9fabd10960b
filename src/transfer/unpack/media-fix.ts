import type { Finding } from '../../util/findings.js';
import type { VerifyResult } from '../../depot/verify.js';

/** The next step for what a pack holds but an unreadable volume kept from the depot. */
export const ON_THE_MEDIA = 'It is on the media: supply the volume named above and run the same unpack again (what is in place is kept).';

/**
 * Verify's findings about files the pack holds but could not place (a volume missing or damaged), or about a
 * folder that holds one, advised from the media: the files are on it, so a download and a build are not the fix.
 */
export function adviseFromMedia(verify: VerifyResult, notPlaced: readonly { path: string }[]): VerifyResult {
  if (notPlaced.length === 0) return verify;
  const paths = notPlaced.map((f) => f.path);
  const held = (f: Finding) => {
    if (f.path === undefined || f.severity === 'info') return false;
    const folder = f.path.endsWith('/') ? f.path : `${f.path}/`;
    return paths.some((p) => p === f.path || p.startsWith(folder));
  };
  return { ...verify, findings: verify.findings.map((f) => (held(f) ? { ...f, fix: ON_THE_MEDIA } : f)) };
}
