import { parseJsonOrWhy } from '../util/json.js';

/** A release of the manifest: its version and bill of materials (component name and product version). */
export interface ManifestRelease {
  version: string;
  releaseDate?: string;
  minInstallerVersion?: string;
  bom: { name: string; version: string }[];
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The manifest's releases, read tolerantly (only fragments of its shape are public), or why they cannot be. */
export function readManifestReleases(text: string): ManifestRelease[] | string {
  const parsed = parseJsonOrWhy(text, 'The manifest');
  if (typeof parsed === 'string') return parsed;
  const { value } = parsed;
  const releases = (value as { releases?: unknown } | null)?.releases;
  if (!Array.isArray(releases)) return 'The manifest has no list of releases.';
  const out: ManifestRelease[] = [];
  for (const r of releases as Record<string, unknown>[]) {
    const version = str(r?.version);
    if (version === undefined || !Array.isArray(r.bom)) return 'A release of the manifest has no version or bill of materials.';
    const bom = (r.bom as Record<string, unknown>[]).flatMap((b) => {
      const name = str(b?.name);
      const v = str(b?.version);
      return name !== undefined && v !== undefined ? [{ name, version: v }] : [];
    });
    const releaseDate = str(r.releaseDate);
    const minInstallerVersion = str(r.minInstallerVersion);
    out.push({ version, ...(releaseDate !== undefined ? { releaseDate } : {}), ...(minInstallerVersion !== undefined ? { minInstallerVersion } : {}), bom });
  }
  return out;
}
