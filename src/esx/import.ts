import { createHash } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ESX_DEPOT } from '../constants.js';
import { PositionalWriter } from '../util/chunked-io.js';
import { describeFsError, usageError } from '../util/errors.js';
import { type Finding, hasErrors } from '../util/findings.js';
import { exists, readFileBounded, syncDir, tempPathFor, writeFileAtomic } from '../util/fs.js';
import { sha256Files } from '../util/hash.js';
import { ESX_LIMITS } from '../util/limits.js';
import type { ProgressHooks } from '../util/progress.js';
import { type EsxChain, readEsxChain, resolveReference } from './chain.js';
import { type MetadataEntry, parseRootIndex, parseVendorIndex, rootIndexXml, vendorIndexXml } from './indexes.js';
import { locateDepots } from './locate.js';
import type { EsxVib } from './model.js';
import { bundleSource, type EsxSource } from './source.js';

/** Where imported bundles go, each in a folder of its own name, under the depot's own indexes. */
export const BUNDLES_DIR = 'bundles';

export interface EsxImportOptions extends Partial<ProgressHooks> {
  /** Replace a VIB in place whose bytes are not the ones the metadata states, and write over a depot not made by an import. */
  force?: boolean;
}

export interface ImportedBundle {
  bundle: string;
  /** Its folder, relative to the depot. */
  folder: string;
  products: { productId: string; version: string }[];
  vibs: number;
  /** VIBs already in place with the stated bytes, not written again. */
  kept: number;
  bytes: number;
}

export interface EsxImportResult {
  out: string;
  /** Depot-relative path of the root index that lists every bundle imported so far. */
  index: string;
  bundles: ImportedBundle[];
  findings: Finding[];
  ok: boolean;
}

interface Planned {
  source: EsxSource;
  chain: EsxChain;
  name: string;
  /** What reading its chain found: a bundle with an error is not imported. */
  findings: Finding[];
}

const bundleFolderName = (bundle: string): string =>
  basename(bundle)
    .replace(/\.zip$/i, '')
    .replace(/[^A-Za-z0-9._-]/g, '_');

/**
 * Writes a stream through a temporary name beside `dest`, hashing what is written; renamed into
 * place only with the size and SHA-256 the metadata states. Returns what was found instead, if not.
 */
async function placeVerified(chunks: AsyncIterable<Buffer>, dest: string, vib: EsxVib, onBytes?: (n: number) => void): Promise<string | undefined> {
  const temp = tempPathFor(dest);
  const hash = createHash('sha256');
  let size = 0;
  try {
    const handle = await open(temp, 'wx', 0o644);
    try {
      const writer = new PositionalWriter(handle);
      for await (const chunk of chunks) {
        hash.update(chunk);
        size += chunk.length;
        await writer.write(chunk);
        onBytes?.(chunk.length);
      }
      await writer.flush();
      await handle.datasync();
    } finally {
      await handle.close();
    }
    const sha256 = hash.digest('hex');
    if ((vib.size !== undefined && size !== vib.size) || sha256 !== vib.sha256) return `${size} bytes with SHA-256 ${sha256}`;
    await rename(temp, dest);
    return undefined;
  } finally {
    await rm(temp, { force: true });
  }
}

/**
 * The VIBs already in `folder` with the bytes their metadata states, hashed in one pass over every core;
 * a file there with other bytes is refused without `force`, before anything of the bundle is written.
 */
async function inPlace(folder: string, vibs: readonly EsxVib[], force: boolean): Promise<Set<string>> {
  const infos = await Promise.all(vibs.map((vib) => stat(join(folder, vib.path)).catch(() => undefined)));
  const sized = vibs.filter((vib, i) => infos[i]?.isFile() && infos[i]!.size === vib.size);
  const hashed = await sha256Files(sized.map((vib) => join(folder, vib.path)));
  const kept = new Set(sized.filter((vib, i) => hashed[i]?.sha256 === vib.sha256).map((vib) => vib.path));
  const other = vibs.find((vib, i) => infos[i] !== undefined && !kept.has(vib.path));
  if (other && !force) throw usageError(`${join(folder, other.path)} already exists with other bytes than its metadata states.`, 'Use `force` to replace it.');
  return kept;
}

/** The VIBs a bundle's metadata vouches for, written into its folder; one whose bytes differ is never placed. */
async function placeVibs(plan: Planned, folder: string, options: EsxImportOptions): Promise<{ vibs: number; kept: number; bytes: number }> {
  const findings = plan.findings;
  const vibs = new Map<string, EsxVib>();
  for (const zip of plan.chain.metadata.values()) for (const vib of zip.vibs) vibs.set(vib.path, vib);
  const kept = await inPlace(
    folder,
    [...vibs.values()].filter((vib) => vib.sha256),
    options.force ?? false,
  );
  let bytes = 0;
  for (const vib of vibs.values()) {
    if (!vib.sha256) {
      findings.push({
        id: 'esx.import.unvouched',
        severity: 'error',
        message: `${plan.source.label}: its metadata states no SHA-256 for ${vib.path}, so it was not placed.`,
        path: vib.path,
      });
      continue;
    }
    if (kept.has(vib.path)) continue;
    const dest = join(folder, vib.path);
    if ((await plan.source.size(vib.path)) === undefined) {
      findings.push({
        id: 'esx.vib.missing',
        severity: 'error',
        message: `${plan.source.label} lacks ${vib.path}, which its metadata lists.`,
        path: vib.path,
        fix: 'Download the offline bundle again.',
      });
      continue;
    }
    await mkdir(dirname(dest), { recursive: true }).catch((err: unknown) => {
      throw describeFsError(err, dirname(dest));
    });
    const wrong = await placeVerified(await plan.source.stream(vib.path), dest, vib, options.onBytes);
    if (wrong) {
      const message = `${plan.source.label} holds ${vib.path} as ${wrong}, not the ${vib.size ?? '?'} bytes with SHA-256 ${vib.sha256} its metadata states: not placed.`;
      findings.push({ id: 'esx.vib.checksum', severity: 'error', message, path: vib.path, fix: 'Download the offline bundle again.' });
    } else bytes += vib.size ?? 0;
  }
  return { vibs: vibs.size, kept: kept.size, bytes };
}

/** The bundle's own documents (root and vendor indexes, metadata zips), copied as they are. */
async function placeDocuments(plan: Planned, folder: string): Promise<void> {
  const documents = [...plan.chain.metadata.keys(), ...plan.chain.vendors.map((v) => v.index), plan.chain.index];
  for (const path of documents) {
    const limit = path === plan.chain.index || plan.chain.vendors.some((v) => v.index === path) ? ESX_LIMITS.indexBytes : ESX_LIMITS.metadataZipBytes;
    const bytes = await plan.source.read(path, limit);
    if (bytes) await writeFileAtomic(join(folder, path), bytes, { force: true, syncFolder: false });
  }
}

/** Each bundle read and its chain judged before anything is written: a broken bundle writes nothing. */
async function planBundles(bundles: readonly string[]): Promise<Planned[]> {
  const plans: Planned[] = [];
  const opened: EsxSource[] = [];
  try {
    for (const bundle of bundles) {
      const source = await bundleSource(bundle);
      opened.push(source);
      const top = locateDepots(await source.files()).find((d) => d.folder === '' && d.kind === 'index');
      if (!top) throw usageError(`${bundle} has no ${ESX_DEPOT.rootIndexNames.join(' or ')} at its top: it is not an ESX offline bundle.`);
      const own: Finding[] = [];
      const chain = await readEsxChain(source, top.index, own);
      plans.push({ source, chain, name: bundleFolderName(bundle), findings: own.map((f) => ({ ...f, message: `${bundle}: ${f.message}` })) });
    }
  } catch (err) {
    for (const source of opened) source.close();
    throw err;
  }
  const names = plans.map((p) => p.name);
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice) {
    for (const plan of plans) plan.source.close();
    throw usageError(`Two of the bundles given would both go to ${BUNDLES_DIR}/${twice}: give each once.`);
  }
  return plans;
}

/**
 * The depot's own root index and one vendor index per vendor, listing the metadata of every bundle
 * imported so far (each bundle's own indexes, kept in its folder, say what it holds). The root index
 * is written last: a reader never sees it name a vendor index that is not there yet.
 */
async function writeIndexes(root: string): Promise<string> {
  const byVendor = new Map<string, { name: string; entries: MetadataEntry[] }>();
  const folders = (await readdir(join(root, BUNDLES_DIR), { withFileTypes: true }).catch(() => []))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  for (const name of folders) {
    const rootIndex = ESX_DEPOT.rootIndexNames.map((file) => `${BUNDLES_DIR}/${name}/${file}`);
    for (const path of rootIndex) {
      const text = await readSmall(join(root, path));
      if (text === undefined) continue;
      for (const vendor of parseRootIndex(text).filter((v) => v.contentTypes.includes(ESX_DEPOT.esxContentType))) {
        const target = resolveReference(path, `${vendor.relativePath || '.'}/${vendor.indexfile}`);
        const vendorText = 'path' in target ? await readSmall(join(root, target.path)) : undefined;
        if (!vendorText || !('path' in target)) continue;
        const list = byVendor.get(vendor.code) ?? { name: vendor.name, entries: [] };
        for (const entry of parseVendorIndex(vendorText)) {
          const zip = resolveReference(target.path, entry.url);
          if ('path' in zip) list.entries.push({ ...entry, url: zip.path });
        }
        byVendor.set(vendor.code, list);
      }
      break;
    }
  }
  const vendors = [...byVendor.entries()].sort(([a], [b]) => a.localeCompare(b));
  for (const [code, { entries }] of vendors) await writeFileAtomic(join(root, vendorIndexName(code)), vendorIndexXml(entries), { force: true });
  const index = ESX_DEPOT.rootIndexNames[0];
  await writeFileAtomic(
    join(root, index),
    rootIndexXml(vendors.map(([code, v]) => ({ name: v.name, code, indexfile: vendorIndexName(code), relativePath: '' }))),
    { force: true },
  );
  return index;
}

const vendorIndexName = (code: string): string => `vendor-${code.replace(/[^A-Za-z0-9._-]/g, '_') || 'vendor'}-index.xml`;

async function readSmall(path: string): Promise<string | undefined> {
  return (await exists(path)) ? (await readFileBounded(path, ESX_LIMITS.indexBytes, 'ESX depot index')).toString('utf8') : undefined;
}

/**
 * Imports offline bundles (`*-depot.zip`) into one ESX depot at `out`: each bundle's metadata and the
 * VIBs it vouches for (size and SHA-256 checked as they are written, through temporary names) in
 * `bundles/<name>/`, and a root index and vendor indexes at `out` that list every bundle imported
 * there, so that one URL serves them all. A bundle whose chain is broken writes nothing.
 */
export async function importBundles(bundles: readonly string[], out: string, options: EsxImportOptions = {}): Promise<EsxImportResult> {
  if (bundles.length === 0) throw usageError('Give at least one offline bundle (a *-depot.zip file).');
  const root = resolve(out);
  const index = ESX_DEPOT.rootIndexNames[0];
  if (!options.force && (await exists(join(root, index))) && !(await exists(join(root, BUNDLES_DIR)))) {
    throw usageError(`${join(root, index)} is the index of a depot that no import made: importing would replace it.`, 'Use `force` to replace it.');
  }
  const plans = await planBundles(bundles);
  const imported: ImportedBundle[] = [];
  try {
    const sound = plans.filter((plan) => !hasErrors(plan.findings));
    const total = sound.flatMap((p) => [...p.chain.metadata.values()].flatMap((m) => m.vibs)).reduce((sum, v) => sum + (v.size ?? 0), 0);
    options.onStart?.(total);
    for (const plan of sound) {
      const folder = join(root, BUNDLES_DIR, plan.name);
      const placed = await placeVibs(plan, folder, options);
      // The indexes after the VIBs, and only when every VIB landed: the depot never lists a VIB it lacks.
      if (hasErrors(plan.findings)) continue;
      await placeDocuments(plan, folder);
      await syncDir(folder);
      const products = plan.chain.products.map((p) => ({ productId: p.productId, version: p.version }));
      imported.push({ bundle: plan.source.label, folder: `${BUNDLES_DIR}/${plan.name}`, products, ...placed });
    }
    await writeIndexes(root);
  } finally {
    for (const plan of plans) plan.source.close();
  }
  const findings = plans.flatMap((plan) => plan.findings);
  return { out: root, index, bundles: imported, findings, ok: !hasErrors(findings) };
}
