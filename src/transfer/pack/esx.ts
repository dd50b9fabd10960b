import { join } from 'node:path';
import { type EsxProductStatus, judgeProducts } from '../../esx/status.js';
import { type TreeEsx, esxFolderOf, readTreeEsx } from '../../esx/tree.js';
import { type EsxSelectOptions, type EsxSelectionSummary, chooseMetadata, selectionSummary } from '../esx-mirror/select.js';
import { describeFsError } from '../../util/errors.js';
import type { Finding } from '../../util/findings.js';
import { sha256Files } from '../../util/hash.js';
import type { DepotFile } from '../contents.js';
import type { PackEsx } from '../format.js';

/** What pack found of the ESX depots beside `PROD/`, and what of them it leaves out. */
export interface PackEsxReport {
  /** Their folders. */
  depots: string[];
  /** Each product and version, with the VIBs of it that the depot holds (carried, or the other side's for a delta). */
  products: EsxProductStatus[];
  /** VIBs the metadata lists that the depot lacks: not carried (a selective esx mirror leaves some so). */
  missing: string[];
  /** VIBs of another size than their metadata states, and VIBs whose metadata states no SHA-256: not carried, nothing would vouch for them. */
  wrongSize: { path: string; size: number; actualSize: number }[];
  noChecksum: string[];
  /** VIB files no metadata lists: not carried (`depot prune` lists them). */
  unlisted: string[];
  /** Links of a chain that break, as `esx verify` words them. */
  findings: Finding[];
  /** With a choice of products: what was chosen, and the VIBs only other products list (not carried, not missing). */
  selection?: EsxSelectionSummary;
}

export interface EsxSource {
  files: DepotFile[];
  /** Each VIB's SHA-256 as its metadata states it, and each metadata zip's as it was read, by path: what the pack must carry. */
  checksums: Map<string, string>;
  /** Every VIB of the depots' folders their metadata lists with a SHA-256, held or not. */
  listed: Map<string, { size: number; sha256: string }>;
  /** VIBs the metadata lists that a choice of products left out: still the depots' (a delta does not remove them on the other side). */
  leftOut: Set<string>;
  manifest: PackEsx;
  report: PackEsxReport;
}

/**
 * The ESX depots of the tree as pack carries them: every file of their folders, each VIB the metadata
 * lists held to the SHA-256 it states (a VIB no metadata vouches for is not carried), the metadata zips
 * hashed so that the manifest, and through it the seal, vouches for them.
 */
export async function readEsxSource(root: string, select?: EsxSelectOptions): Promise<EsxSource | undefined> {
  const tree = await readTreeEsx(root);
  if (tree.depots.length === 0) return undefined;
  const choice = chooseVibs(tree, select);
  const report: PackEsxReport = {
    depots: tree.depots.map((d) => d.folder),
    products: [],
    missing: [],
    wrongSize: [],
    noChecksum: [],
    unlisted: [],
    findings: [],
  };
  report.findings = tree.findings.filter((f) => f.severity === 'error');
  const files: DepotFile[] = [];
  const checksums = new Map<string, string>();
  const held = new Set<string>();
  for (const file of tree.files) {
    const vib = tree.vibs.get(file.path);
    if (vib && !choice.wanted(file.path)) continue;
    if (!vib) {
      if (file.path.endsWith('.vib')) report.unlisted.push(file.path);
      else files.push({ ...file, kind: 'esx-metadata' });
    } else if (vib.size !== undefined && vib.size !== file.size) report.wrongSize.push({ path: file.path, size: vib.size, actualSize: file.size });
    else if (!vib.sha256) report.noChecksum.push(file.path);
    else {
      files.push({ ...file, kind: 'esx-vib' });
      checksums.set(file.path, vib.sha256);
      held.add(file.path);
    }
  }
  const present = new Set(tree.files.map((f) => f.path));
  for (const path of tree.vibs.keys()) if (esxFolderOf(tree.depots, path) && !present.has(path) && choice.wanted(path)) report.missing.push(path);
  if (choice.summary) report.selection = choice.summary;
  report.products = tree.depots.flatMap((d) => judgeProducts(d.products, d.metadata, held));
  const zips = tree.depots.flatMap((d) => [...d.metadata.keys()]);
  const sizes = new Map(tree.files.map((f) => [f.path, f.size]));
  const hashed = await sha256Files(zips.map((p) => join(root, p)));
  const metadata = hashed.map((r, i) => {
    if (r.error || !r.sha256) throw describeFsError(r.error, r.path);
    return { path: zips[i]!, size: sizes.get(zips[i]!) ?? 0, sha256: r.sha256 };
  });
  for (const zip of metadata) checksums.set(zip.path, zip.sha256);
  const manifest: PackEsx = {
    depots: tree.depots.map((d) => ({ folder: d.folder, kind: d.kind, index: d.index })),
    products: tree.depots.flatMap((d) =>
      d.products.map((p) => ({ folder: d.folder, vendor: p.vendor, productId: p.productId, version: p.version, metadata: p.metadata })),
    ),
    metadata,
  };
  const listed = new Map<string, { size: number; sha256: string }>();
  for (const [path, vib] of tree.vibs)
    if (vib.sha256 && esxFolderOf(tree.depots, path) && choice.wanted(path)) listed.set(path, { size: vib.size ?? 0, sha256: vib.sha256 });
  const leftOut = new Set([...tree.vibs.keys()].filter((path) => !choice.wanted(path)));
  return { files, checksums, listed, manifest, report, leftOut };
}

/**
 * The VIBs to carry, as `esx mirror` chooses those to download: every one, or those the metadata zips of
 * the products and versions chosen list (a choice that matches nothing is refused, naming what the depots
 * offer); every metadata zip is carried still, so the other products arrive as metadata only.
 */
function chooseVibs(tree: TreeEsx, select: EsxSelectOptions | undefined) {
  const { metadata, chosen } = chooseMetadata({ products: tree.depots.flatMap((d) => d.products) }, select);
  const wanted = new Set<string>();
  for (const depot of tree.depots) for (const [zip, read] of depot.metadata) if (metadata.has(zip)) for (const vib of read.vibs) wanted.add(vib.path);
  const leftOut = [...tree.vibs].filter(([path]) => !wanted.has(path));
  const summary = selectionSummary(select, chosen, { vibs: leftOut.length, bytes: leftOut.reduce((sum, [, vib]) => sum + (vib.size ?? 0), 0) });
  return { wanted: (path: string) => !summary || wanted.has(path), summary };
}
