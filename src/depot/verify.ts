import { resolve } from 'node:path';
import { REQUIRED_COMPONENTS, componentsOf } from '../constants.js';
import { type Finding, hasErrors } from '../util/findings.js';
import { isDirectory } from '../util/fs.js';
import type { ProgressHooks } from '../util/progress.js';
import { catalogBinaries, catalogRelease } from './catalog.js';
import type { ReleaseJudgement, ReleaseVerdict, SeenFile } from './release-status.js';
import { checkBinaries, checkHashes, reportUncatalogued } from './verify/binaries.js';
import { checkComponentFolders, checkRequiredFiles, checkTempFiles, notADepotFolder, rootFinding } from './verify/layout.js';
import { checkMetadata, readCatalog } from './verify/metadata.js';
import { judgeDepotReleases } from './verify/releases.js';
import { checkSignature } from './verify/signature.js';

/** `onStart` announces the bytes to hash before `onBytes` counts them (for a progress bar). */
export interface VerifyOptions extends Partial<ProgressHooks> {
  /** Hash every binary and compare with the catalog. */
  deep?: boolean;
  /** PEM public key or certificate that signed a toolkit-made catalog. */
  signingCertPem?: string;
  concurrency?: number;
  now?: Date;
}

export interface VerifyResult {
  dir: string;
  ok: boolean;
  findings: Finding[];
  stats: { binaries: number; present: number; bytes: number; hashed: number };
  /** How the releases were told apart: by the manifest's releases, else by the catalog's product versions. */
  grouping?: ReleaseJudgement['grouping'];
  /**
   * What each release holds, in version order (none when the catalog cannot be read). A release that is metadata
   * only is not an error while another release holds binaries: a depot cut to some releases.
   */
  releases: ReleaseVerdict[];
  /** The selection the depot records (a selective mirror or unpack made it), in words: what it was judged on. */
  selection?: string;
}

/** Checks a depot tree the way the installer and its downloads will need it. */
export async function verifyDepot(dir: string, options: VerifyOptions = {}): Promise<VerifyResult> {
  const root = resolve(dir);
  let findings: Finding[] = [];
  const stats = { binaries: 0, present: 0, bytes: 0, hashed: 0 };
  let releases: Pick<VerifyResult, 'grouping' | 'releases' | 'selection'> = { releases: [] };
  const result = (): VerifyResult => ({ dir: root, ok: !hasErrors(findings), findings, stats, ...releases });

  if (!(await isDirectory(root))) throw await notADepotFolder(root);
  const noRoot = await rootFinding(root);
  if (noRoot) {
    findings.push(noRoot);
    return result();
  }
  await checkRequiredFiles(root, findings);
  const { catalog, bytes } = await readCatalog(root, findings);
  // The folders the installer needs depend on the release (9.1 has no VRSLCM).
  const release = catalog ? catalogRelease(catalog) : '9.0';
  await checkComponentFolders(
    root,
    REQUIRED_COMPONENTS.filter((c) => componentsOf(release).includes(c)),
    findings,
  );
  await checkTempFiles(root, findings);
  await checkMetadata(root, findings, options.now ?? new Date());
  if (bytes) await checkSignature(root, bytes, findings, options.signingCertPem);
  if (!catalog) return result();

  const binaries = catalogBinaries(catalog);
  stats.binaries = binaries.length;
  const seen = new Map<string, SeenFile>();
  const sized = await checkBinaries(root, binaries, findings, seen);
  stats.present = sized.length;
  stats.bytes = sized.reduce((sum, b) => sum + b.size, 0);
  await reportUncatalogued(root, binaries, findings);
  if (options.deep && sized.length > 0) {
    options.onStart?.(stats.bytes);
    stats.hashed = await checkHashes(root, sized, findings, options, seen);
  }
  const judged = await judgeDepotReleases(root, catalog, seen, findings);
  findings = judged.findings;
  const { grouping, releases: verdicts, selection } = judged.judgement;
  releases = { grouping, releases: verdicts, ...(selection !== undefined ? { selection } : {}) };
  return result();
}
