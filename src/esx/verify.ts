import { posix, resolve } from 'node:path';
import { ESX_DEPOT } from '../constants.js';
import { type Finding, hasErrors } from '../util/findings.js';
import { isDirectory } from '../util/fs.js';
import type { ProgressHooks } from '../util/progress.js';
import { readEsxChain, readMetadataZip } from './chain.js';
import { type LocatedDepot, locateDepots } from './locate.js';
import type { EsxMetadata, EsxProduct, EsxVib } from './model.js';
import { bundleSource, type EsxSource, folderSource } from './source.js';
import { type EsxProductStatus, judgeProducts } from './status.js';
import { checkVibs } from './vibs.js';

export interface EsxVerifyOptions extends Partial<ProgressHooks> {
  /** Hash every VIB and compare with the SHA-256 its metadata states. */
  deep?: boolean;
}

/** One ESX depot of the tree, judged. */
export interface EsxDepotReport {
  /** Its folder in the tree ('' for the tree or bundle itself). */
  folder: string;
  kind: 'online' | 'bundle' | 'umds';
  /** Tree-relative path of its root index (or UMDS's consolidated index). */
  index: string;
  products: EsxProductStatus[];
  stats: { metadata: number; vibs: number; present: number; bytes: number; hashed: number };
}

export interface EsxVerifyResult {
  path: string;
  ok: boolean;
  depots: EsxDepotReport[];
  findings: Finding[];
}

/**
 * Verifies every ESX depot in a tree (an online depot's folder, a served tree holding
 * umds-patch-store/ or PROD/COMP/ESX_HOST/..., a UMDS patch store) or an offline bundle zip: every
 * index resolves, every metadata zip opens within bounds, every VIB is there at its stated size, and
 * with `deep` has its stated SHA-256.
 */
export async function verifyEsx(path: string, options: EsxVerifyOptions = {}): Promise<EsxVerifyResult> {
  const full = resolve(path);
  const folder = await isDirectory(full);
  const source = folder ? folderSource(full) : await bundleSource(full);
  try {
    const files = await source.files();
    const located = locateDepots(files);
    const findings: Finding[] = [];
    if (located.length === 0) {
      findings.push({
        id: 'esx.depot.none',
        severity: 'error',
        message: folder
          ? `${path} holds no ESX depot: no ${ESX_DEPOT.rootIndexNames.join(' or ')} and no UMDS patch store.`
          : `${path} has no ${ESX_DEPOT.rootIndexNames[0]} at its top: it is not an ESX offline bundle.`,
        fix: 'Give the folder the depot was copied to, or the *-depot.zip offline bundle as downloaded.',
      });
    }
    const depots: EsxDepotReport[] = [];
    const listed = new Set<string>();
    // A depot whose chain breaks lists fewer VIBs than it holds: its VIBs are not called unlisted too.
    const whole: LocatedDepot[] = [];
    for (const depot of located) {
      const before = findings.length;
      depots.push(await verifyOne(source, depot, files, listed, findings, options));
      if (!findings.slice(before).some((f) => f.id.startsWith('esx.index') || f.id.startsWith('esx.vendor-index') || f.id.startsWith('esx.metadata')))
        whole.push(depot);
    }
    reportUnlisted(files, whole, listed, findings);
    return { path: full, ok: !hasErrors(findings), depots, findings };
  } finally {
    source.close();
  }
}

async function verifyOne(
  source: EsxSource,
  depot: LocatedDepot,
  files: readonly string[],
  listed: Set<string>,
  findings: Finding[],
  options: EsxVerifyOptions,
): Promise<EsxDepotReport> {
  let products: EsxProduct[];
  let metadata: Map<string, EsxMetadata>;
  if (depot.kind === 'index') {
    ({ products, metadata } = await readEsxChain(source, depot.index, findings));
  } else {
    ({ products, metadata } = await readUmdsStore(source, depot, files, findings));
  }
  const vibs = new Map<string, EsxVib>();
  for (const zip of metadata.values()) for (const vib of zip.vibs) if (!vibs.has(vib.path)) vibs.set(vib.path, vib);
  for (const path of [...metadata.keys(), ...vibs.keys()]) listed.add(path);
  const checked = await checkVibs(source, [...vibs.values()], findings, options);
  const kind = depot.kind === 'umds' ? 'umds' : source.kind === 'bundle' && depot.folder === '' ? 'bundle' : 'online';
  return {
    folder: depot.folder,
    kind,
    index: depot.index,
    products: judgeProducts(products, metadata, checked.present),
    stats: { metadata: metadata.size, vibs: vibs.size, present: checked.present.size, bytes: checked.bytes, hashed: checked.hashed },
  };
}

/**
 * UMDS's consolidated index has no published schema, so its store is verified through what can be
 * read: every metadata zip under its folder, and the VIBs they list. Which products and versions it
 * offers is not judged, and a finding says so.
 */
export async function readUmdsStore(
  source: EsxSource,
  depot: LocatedDepot,
  files: readonly string[],
  findings: Finding[],
): Promise<{ products: EsxProduct[]; metadata: Map<string, EsxMetadata> }> {
  const prefix = depot.folder ? `${depot.folder}/` : '';
  const zips = files.filter((f) => f.startsWith(prefix) && f.endsWith('.zip') && !f.includes(`/${ESX_DEPOT.vibDir}/`));
  const metadata = new Map<string, EsxMetadata>();
  for (const path of zips) {
    const read = await readMetadataZip(source, path, findings);
    if (read) metadata.set(path, read);
  }
  findings.push({
    id: 'esx.umds.index-not-read',
    severity: 'info',
    message: `${depot.index} is UMDS's own index, whose format is not published: its ${metadata.size} metadata zips and the VIBs they list were verified, not which products and versions the store offers.`,
    path: depot.index,
  });
  const products = [...metadata.keys()].map((path) => ({ vendor: '', productId: '', version: '', channels: [], metadata: path }));
  return { products, metadata };
}

/** VIBs in a depot's folder that no metadata lists: vLCM never sees them, and they may be the wrong files. */
function reportUnlisted(files: readonly string[], located: LocatedDepot[], listed: Set<string>, findings: Finding[]): void {
  const unlisted = files.filter((f) => f.endsWith('.vib') && !listed.has(f) && located.some((d) => d.folder === '' || f.startsWith(`${d.folder}/`)));
  if (unlisted.length === 0) return;
  findings.push({
    id: 'esx.vib.unlisted',
    severity: 'warning',
    message: `${unlisted.length} VIB file${unlisted.length === 1 ? '' : 's'} in the depot ${unlisted.length === 1 ? 'is' : 'are'} listed by no metadata: vLCM never offers ${unlisted.length === 1 ? 'it' : 'them'}.`,
    path: posix.dirname(unlisted[0]!),
    evidence: { files: unlisted.slice(0, 20) },
    fix: 'Remove the files, or copy the metadata zip that lists them.',
  });
}
