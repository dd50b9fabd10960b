import { isObject, parseJsonOrWhy } from '../util/json.js';
import { escapeControlChars } from '../util/text.js';
import { type Catalog, fileNameProblem } from './catalog.js';

// Plain reading only (no compiled JSON schema, no node-forge): the serving process reads the catalog with this
// and stays small. `parseCatalog` (catalog.ts) judges the whole shape for verify, build and the transfers.

/** One version of one component in the catalog, with the files it names. */
export interface CatalogEntry {
  component: string;
  productVersion: string;
  releaseDate?: string;
  /** `type`: the upper-cased type of the bundle that lists it (empty when the bundle names none). */
  binaries: { fileName: string; size: number; checksum: string; type: string }[];
}

/** Why a bundle's binaries cannot be listed, or undefined when each has a bare name, a size and a SHA-256. */
function readBinaries(binaries: unknown[], where: string, type: string, out: CatalogEntry['binaries']): string | undefined {
  for (const b of binaries) {
    const fileName = isObject(b) ? b.fileName : undefined;
    if (typeof fileName !== 'string' || fileName === '') return `A binary of ${where} in the catalog has no file name.`;
    // Too long a name is a file no depot can have: the page shows it missing, as the transfers place the rest.
    const problem = fileNameProblem(fileName, true);
    if (problem !== undefined) return `The ${where} binary "${escapeControlChars(fileName)}" in the catalog has a file name that ${problem}: refused.`;
    const { size, checksum } = b as Record<string, unknown>;
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) return `${fileName} in the catalog has no size in whole bytes.`;
    if (typeof checksum !== 'string' || !/^[0-9a-fA-F]{64}$/.test(checksum)) return `${fileName} in the catalog has no SHA-256 checksum.`;
    out.push({ fileName, size, checksum: checksum.toLowerCase(), type });
  }
  return undefined;
}

/** One version of a component as an entry, or why it cannot be used. */
function readVersion(component: string, v: unknown): CatalogEntry | string {
  if (!isObject(v) || typeof v.productVersion !== 'string' || v.productVersion === '') return `A version of ${component} in the catalog has no productVersion.`;
  const where = `${component} ${v.productVersion}`;
  const bundles = isObject(v.artifacts) ? v.artifacts.bundles : undefined;
  if (!Array.isArray(bundles)) return `${where} in the catalog has no list of bundles.`;
  const binaries: CatalogEntry['binaries'] = [];
  for (const bundle of bundles as unknown[]) {
    if (!isObject(bundle) || !Array.isArray(bundle.binaries)) return `A bundle of ${where} in the catalog has no list of binaries.`;
    const problem = readBinaries(bundle.binaries as unknown[], where, typeof bundle.type === 'string' ? bundle.type.toUpperCase() : '', binaries);
    if (problem !== undefined) return problem;
  }
  return { component, productVersion: v.productVersion, ...(typeof v.releaseDate === 'string' ? { releaseDate: v.releaseDate } : {}), binaries };
}

/**
 * The catalog's entries, or why it cannot be used. The rules that keep a hostile catalog inside the depot are
 * the catalog reader's (catalog.ts): a component is a folder name, a file name one a depot can hold (no slash,
 * no leading dot, no control character), a size a whole number, a checksum SHA-256 hex. Anything else is read
 * as it comes.
 */
export function readCatalogEntries(text: string): CatalogEntry[] | string {
  const parsed = parseJsonOrWhy(text, 'The catalog');
  if (typeof parsed === 'string') return parsed;
  const { value } = parsed;
  if (!isObject(value) || !isObject(value.patches)) return 'The catalog has no "patches" object.';
  const entries: CatalogEntry[] = [];
  for (const [component, versions] of Object.entries(value.patches)) {
    if (!/^[A-Za-z0-9_-]+$/.test(component)) return `The catalog names a component that is not a folder name: "${component}".`;
    if (!Array.isArray(versions)) return `The catalog's ${component} entry is not a list of versions.`;
    for (const v of versions as unknown[]) {
      const entry = readVersion(component, v);
      if (typeof entry === 'string') return entry;
      entries.push(entry);
    }
  }
  return entries;
}

/** The entries of a catalog already read and judged whole (`parseCatalog`), for the readers that share these shapes. */
export function catalogEntriesOf(catalog: Catalog): CatalogEntry[] {
  return Object.entries(catalog.patches).flatMap(([component, versions]) =>
    versions.map((v) => ({
      component,
      productVersion: v.productVersion,
      ...(v.releaseDate !== undefined ? { releaseDate: v.releaseDate } : {}),
      binaries: v.artifacts.bundles.flatMap((bundle) =>
        bundle.binaries.map((b) => ({ fileName: b.fileName, size: b.size, checksum: b.checksum.toLowerCase(), type: bundle.type.toUpperCase() })),
      ),
    })),
  );
}
