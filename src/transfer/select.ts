import { componentDir } from '../constants.js';
import type { Catalog } from '../depot/catalog.js';
import { type CatalogEntry, catalogEntriesOf } from '../depot/catalog-entries.js';
import { readManifestReleases } from '../depot/manifest-releases.js';
import { type Choice, type SelectOptions, checkChoice, chosenPaths, describeChoice, releaseBoms } from '../depot/selection.js';
import { usageError } from '../util/errors.js';

export type { Choice } from '../depot/selection.js';

export { SELECT_IMAGE_TYPES, type SelectOptions, selects } from '../depot/selection.js';

/** What a selection chose and left out, for the report (and a pack's manifest, so that unpack judges only what was chosen). */
export interface SelectionSummary extends Choice {
  chosen: { binaries: number; bytes: number };
  leftOut: { binaries: number; bytes: number };
}

export interface BinarySelection {
  /** Depot-relative paths of the binaries chosen. */
  chosen: Set<string>;
  /** Depot-relative paths of the binaries the catalog names that were not chosen. */
  leftOut: Set<string>;
  summary: SelectionSummary;
}

/** The catalog's entries and each release's bill of materials, from the manifest's text when it can be read. */
function catalogOf(catalog: Catalog, manifestText: string | undefined): { entries: CatalogEntry[]; boms: Map<string, Set<string>> } {
  const releases = manifestText === undefined ? undefined : readManifestReleases(manifestText);
  const entries = catalogEntriesOf(catalog);
  return { entries, boms: releaseBoms(entries, typeof releases === 'string' ? undefined : releases) };
}

/** The binaries the choice takes, and the rest the catalog names. */
function match(entries: CatalogEntry[], boms: Map<string, Set<string>>, choice: Choice): BinarySelection {
  const sizes = new Map<string, number>(entries.flatMap((e) => e.binaries.map((b) => [`${componentDir(e.component)}/${b.fileName}`, b.size] as const)));
  const chosen = chosenPaths(entries, boms, choice);
  const leftOut = new Set([...sizes.keys()].filter((p) => !chosen.has(p)));
  const bytes = (paths: Set<string>) => [...paths].reduce((sum, p) => sum + sizes.get(p)!, 0);
  return {
    chosen,
    leftOut,
    summary: {
      releases: choice.releases,
      components: choice.components,
      ...(choice.imageType !== undefined ? { imageType: choice.imageType } : {}),
      chosen: { binaries: chosen.size, bytes: bytes(chosen) },
      leftOut: { binaries: leftOut.size, bytes: bytes(leftOut) },
    },
  };
}

/**
 * The binaries of the chosen releases, components and image type: a binary
 * is chosen when one of its listings in the catalog matches all three. A
 * release takes the builds numbered after it and, when the manifest (its
 * text, `manifestText`) lists the release, every build its bill of materials names.
 * The same choice checked again (a pack's manifest records it) is refused as the options are.
 */
export function selectBinaries(catalog: Catalog, options: SelectOptions, manifestText?: string): BinarySelection {
  const { entries, boms } = catalogOf(catalog, manifestText);
  const checked = checkChoice(options, entries, boms);
  const selection = match(entries, boms, checked);
  if (selection.chosen.size === 0) throw usageError(`No binary of the catalog is of ${describeChoice(checked)}.`);
  return selection;
}

/** A choice made elsewhere (a pack's manifest records it) held to a catalog as the options are: an unknown release or component is refused. */
export function checkedChoice(catalog: Catalog, choice: SelectOptions, manifestText?: string): Choice {
  const { entries, boms } = catalogOf(catalog, manifestText);
  return checkChoice(choice, entries, boms);
}

/** A choice made elsewhere (a pack's manifest records it) applied to a depot's catalog as it is now: nothing is refused. */
export function applyChoice(catalog: Catalog, choice: Choice, manifestText?: string): BinarySelection {
  const { entries, boms } = catalogOf(catalog, manifestText);
  return match(entries, boms, choice);
}
