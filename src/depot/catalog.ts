import { DEPOT_PATHS, type Release, componentDir } from '../constants.js';
import { DepotkitError, EXIT } from '../util/errors.js';
import { escapeControlChars, hasControlChars } from '../util/text.js';
import { describeSchemaErrors } from '../util/schema.js';
import { validateCatalog } from './validators.js';

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

/**
 * A catalog that cannot be used: not JSON, not the catalog's shape, a file
 * name that cannot be a depot's file, or one path named twice with different
 * content. `kind` makes the finding id: `catalog.<kind>.invalid`.
 */
export class CatalogError extends DepotkitError {
  constructor(
    message: string,
    readonly kind: 'json' | 'schema' | 'file-name' | 'duplicate',
  ) {
    super(message, EXIT.usage, 'Copy the catalog again from the vendor metadata; never edit it by hand.');
  }
}

export interface CatalogReading {
  /**
   * Let file names longer than NAME_MAX through: a reader that places files
   * fails only those binaries (see fileNameTooLong) and places the rest. A
   * name that could leave its folder or forge a line is refused whatever this says.
   */
  allowLongNames?: boolean;
}

/** Parses and validates catalog text; `source` names the file in errors. */
export function parseCatalog(text: string, source: string = DEPOT_PATHS.catalog, reading: CatalogReading = {}): Catalog {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CatalogError(`${source} is not valid JSON: ${(err as Error).message}.`, 'json');
  }
  if (!validateCatalog(value)) {
    throw new CatalogError(`${source} does not have the catalog's shape: ${describeSchemaErrors(validateCatalog.errors)}.`, 'schema');
  }
  checkEntries(value as Catalog, source, reading.allowLongNames ?? false);
  return value as Catalog;
}

/** The longest file name a Linux file system takes, in bytes (NAME_MAX). */
const FILE_NAME_MAX_BYTES = 255;

/**
 * Why a binary's file name cannot be a file of a depot, or undefined when it
 * can. It becomes a path on disk and is printed in reports: control characters
 * (ESC, BEL, CR, LF...) would forge report lines or drive the terminal; a name
 * with a slash, '.' or '..' would leave its folder; a dotfile is never served
 * (so no installer could fetch it) and the toolkit's temporary files start
 * with a dot; a name longer than NAME_MAX cannot be made. No vendor file is
 * named so.
 */
export function fileNameProblem(name: string, allowLong: boolean): string | undefined {
  if (hasControlChars(name)) return 'holds control characters';
  if (name.includes('/') || name.includes('\\')) return 'holds a slash';
  if (name.startsWith('.')) return "starts with '.'";
  if (!allowLong) return fileNameTooLong(name);
  return undefined;
}

/** Why no file system takes `name` (longer than NAME_MAX), or undefined when one does. */
export function fileNameTooLong(name: string): string | undefined {
  return Buffer.byteLength(name) > FILE_NAME_MAX_BYTES ? `is longer than ${FILE_NAME_MAX_BYTES} bytes` : undefined;
}

/**
 * What the schema cannot say: file names that cannot be a depot's files (see
 * fileNameProblem). One path named twice with another size or checksum cannot
 * be satisfied by any depot.
 */
function checkEntries(catalog: Catalog, source: string, allowLong: boolean): void {
  const seen = new Map<string, { size: number; checksum: string; bundle: string }>();
  for (const [component, versions] of Object.entries(catalog.patches)) {
    for (const version of versions) {
      for (const bundle of version.artifacts.bundles) {
        for (const binary of bundle.binaries) {
          const problem = fileNameProblem(binary.fileName, allowLong);
          if (problem) {
            throw new CatalogError(
              `${source} names the ${component} binary "${escapeControlChars(binary.fileName)}" (bundle ${escapeControlChars(bundle.name)}) whose file name ${problem}: refused.`,
              'file-name',
            );
          }
          const path = `${componentDir(component)}/${binary.fileName}`;
          const before = seen.get(path);
          const checksum = binary.checksum.toLowerCase();
          if (before && (before.size !== binary.size || before.checksum !== checksum)) {
            throw new CatalogError(
              `${source} names ${path} twice with different ${before.size !== binary.size ? 'sizes' : 'checksums'} (bundles ${escapeControlChars(before.bundle)} and ${escapeControlChars(bundle.name)}): one path cannot hold both.`,
              'duplicate',
            );
          }
          seen.set(path, { size: binary.size, checksum, bundle: bundle.name });
        }
      }
    }
  }
}

/** The release a catalog is for, from its newest product version (9.1 drops VRSLCM). */
export function catalogRelease(catalog: Catalog): Release {
  const newest = Object.values(catalog.patches)
    .flat()
    .map((v) => v.productVersion.split('.').slice(0, 2).map(Number))
    .filter(([major, minor]) => Number.isFinite(major) && Number.isFinite(minor))
    .reduce((max, [major, minor]) => Math.max(max, major! * 100 + minor!), 0);
  return newest >= 901 ? '9.1' : '9.0';
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
