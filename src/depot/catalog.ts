import { DEPOT_PATHS, componentDir } from '../constants.js';
import { usageError } from '../util/errors.js';
import { describeSchemaErrors, validateCatalog } from './schemas.js';

export interface CatalogBinary {
  component: string;
  productVersion: string;
  bundleName: string;
  bundleType: string;
  fileName: string;
  size: number;
  /** Lower-case SHA-256 hex. */
  checksum: string;
  /** Web-root-relative path: PROD/COMP/<component>/<fileName>. */
  path: string;
}

export interface CatalogBundle {
  name: string;
  type: string;
  binaries: { fileName: string; size: number; checksum: string }[];
}

export interface Catalog {
  patches: Record<string, { productVersion: string; releaseDate?: string; artifacts: { bundles: CatalogBundle[] } }[]>;
}

/** Parses and validates catalog text; `source` names the file in errors. */
export function parseCatalog(text: string, source: string = DEPOT_PATHS.catalog): Catalog {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw usageError(`${source} is not valid JSON: ${(err as Error).message}.`, 'Copy the catalog again from the vendor metadata; never edit it by hand.');
  }
  if (!validateCatalog(value)) {
    throw usageError(`${source} does not have the catalog's shape: ${describeSchemaErrors(validateCatalog.errors)}.`);
  }
  return value as Catalog;
}

/** Every binary the catalog names, once per component and file name. */
export function catalogBinaries(catalog: Catalog): CatalogBinary[] {
  const seen = new Map<string, CatalogBinary>();
  for (const [component, versions] of Object.entries(catalog.patches)) {
    for (const version of versions) {
      for (const bundle of version.artifacts.bundles) {
        for (const binary of bundle.binaries) {
          const path = `${componentDir(component)}/${binary.fileName}`;
          if (seen.has(path)) continue;
          seen.set(path, {
            component,
            productVersion: version.productVersion,
            bundleName: bundle.name,
            bundleType: bundle.type,
            fileName: binary.fileName,
            size: binary.size,
            checksum: binary.checksum.toLowerCase(),
            path,
          });
        }
      }
    }
  }
  return [...seen.values()];
}
