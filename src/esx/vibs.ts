import type { Finding } from '../util/findings.js';
import type { ProgressHooks } from '../util/progress.js';
import { plural } from '../util/text.js';
import type { EsxVib } from './model.js';
import type { EsxSource } from './source.js';

/** Paths named in one finding: enough to act on, never thousands of lines. */
const EVIDENCE_FILES = 50;
/** Sizes asked of the source at once (stat calls, or lookups in a bundle's directory). */
const SIZE_BATCH = 64;

export interface CheckedVibs {
  /** VIBs there at their stated size (and, when hashed, with their stated SHA-256). */
  present: Set<string>;
  bytes: number;
  hashed: number;
}

/** Paths a message names before it says how many more there are. */
const NAMED_IN_MESSAGE = 3;

function grouped(id: string, severity: Finding['severity'], message: string, files: (string | { path: string })[], fix: string): Finding {
  const paths = files.map((f) => (typeof f === 'string' ? f : f.path));
  const more = paths.length > NAMED_IN_MESSAGE ? ` and ${paths.length - NAMED_IN_MESSAGE} more` : '';
  return {
    id,
    severity,
    message: `${message}: ${paths.slice(0, NAMED_IN_MESSAGE).join(', ')}${more}.`,
    path: paths[0],
    evidence: { count: files.length, files: files.slice(0, EVIDENCE_FILES) },
    fix,
  };
}

/** Sizes first: a missing or short VIB is named without reading its bytes. */
async function sizeVibs(source: EsxSource, vibs: readonly EsxVib[]) {
  const missing: string[] = [];
  const wrongSize: { path: string; stated: number; found: number }[] = [];
  const sized: EsxVib[] = [];
  const unmeasured: string[] = [];
  let bytes = 0;
  for (let i = 0; i < vibs.length; i += SIZE_BATCH) {
    const batch = vibs.slice(i, i + SIZE_BATCH);
    const sizes = await Promise.all(batch.map((vib) => source.size(vib.path)));
    batch.forEach((vib, j) => {
      const size = sizes[j];
      if (size === undefined) missing.push(vib.path);
      else if (size === null) {
        // There, but of a size not told: not a wrong size. Hashing (deep) still checks its bytes.
        unmeasured.push(vib.path);
        sized.push(vib);
      } else if (vib.size !== undefined && size !== vib.size) wrongSize.push({ path: vib.path, stated: vib.size, found: size });
      else {
        sized.push(vib);
        bytes += size;
      }
    });
  }
  return { missing, wrongSize, sized, unmeasured, bytes };
}

/** The VIBs whose SHA-256 is not the one the metadata states (unreadable ones too). */
async function hashVibs(source: EsxSource, sized: readonly EsxVib[], options: Partial<ProgressHooks>) {
  const toHash = sized.filter((vib) => vib.sha256);
  options.onStart?.(toHash.reduce((sum, vib) => sum + (vib.size ?? 0), 0));
  const digests = await source.sha256(
    toHash.map((vib) => vib.path),
    options.onBytes,
  );
  const wrong = toHash.flatMap((vib) => {
    const found = digests.get(vib.path);
    return found === vib.sha256 ? [] : [{ path: vib.path, stated: vib.sha256!, found: found ?? null }];
  });
  return { hashed: toHash.length, wrong };
}

/** Every VIB the metadata lists: there, at its stated size, and with `deep` its stated SHA-256. One finding per kind of fault. */
export async function checkVibs(
  source: EsxSource,
  vibs: readonly EsxVib[],
  findings: Finding[],
  options: Partial<ProgressHooks> & { deep?: boolean },
): Promise<CheckedVibs> {
  const { missing, wrongSize, sized, unmeasured, bytes } = await sizeVibs(source, vibs);
  const fix = source.kind === 'bundle' ? 'Download the offline bundle again.' : "Copy the VIBs again from the depot's source.";
  const isAre = (n: number, one: string, many: string) => `${plural(n, 'VIB')} ${n === 1 ? one : many}`;
  if (missing.length > 0)
    findings.push(
      grouped('esx.vib.missing', 'error', `${isAre(missing.length, 'that the metadata lists is', 'that the metadata lists are')} missing`, missing, fix),
    );
  if (wrongSize.length > 0) {
    const message = `${isAre(wrongSize.length, 'has', 'have')} another size than the metadata states (cut short, or another file)`;
    findings.push(grouped('esx.vib.size', 'error', message, wrongSize, fix));
  }
  if (unmeasured.length > 0 && !options.deep) {
    const message = `${isAre(unmeasured.length, 'was', 'were')} answered without a Content-Length: ${unmeasured.length === 1 ? 'its' : 'their'} size was not measured`;
    findings.push(grouped('esx.vib.unmeasured', 'warning', message, unmeasured, 'Check them with `deep`, which downloads and hashes each VIB.'));
  }
  const unchecked = sized.filter((vib) => !vib.sha256).map((vib) => vib.path);
  if (unchecked.length > 0) {
    findings.push({
      id: 'esx.vib.no-checksum',
      severity: 'warning',
      message: `The metadata states no SHA-256 for ${plural(unchecked.length, 'VIB')}: ${unchecked.length === 1 ? 'its' : 'their'} bytes cannot be checked.`,
      path: unchecked[0],
      evidence: { count: unchecked.length, files: unchecked.slice(0, EVIDENCE_FILES) },
    });
  }
  const present = new Set(sized.map((vib) => vib.path));
  if (!options.deep) return { present, bytes, hashed: 0 };
  const { hashed, wrong } = await hashVibs(source, sized, options);
  for (const vib of wrong) present.delete(vib.path);
  if (wrong.length > 0) {
    const message = `${isAre(wrong.length, 'does', 'do')} not have the SHA-256 the metadata states (damaged, or another build)`;
    findings.push(grouped('esx.vib.checksum', 'error', message, wrong, fix));
  }
  return { present, bytes, hashed };
}
