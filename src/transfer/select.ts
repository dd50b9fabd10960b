import { BUNDLE_TYPES, INSTALLER_IMAGE_TYPES, componentDir } from '../constants.js';
import type { Catalog } from '../depot/catalog.js';
import type { VerifyResult } from '../depot/verify.js';
import { catalogEntriesOf } from '../depot/catalog-entries.js';
import { readManifestReleases } from '../depot/manifest-releases.js';
import { planReleases } from '../depot/release-plan.js';
import { compareVersions, releaseOfVersion } from '../depot/versions.js';
import { usageError } from '../util/errors.js';
import { hasErrors } from '../util/findings.js';

/** The image types a selection takes: the catalog's bundle types, and the one upgrades are named by. */
export const SELECT_IMAGE_TYPES: readonly string[] = [...new Set<string>([...INSTALLER_IMAGE_TYPES, ...BUNDLE_TYPES])];

/** Which binaries to carry; metadata is always carried whole. Each list empty or absent means every one. */
export interface SelectOptions {
  releases?: string[];
  components?: string[];
  imageType?: string;
}

/** A choice as checked against the catalog: releases as four numbers, components in capitals. */
export interface Choice {
  releases: string[];
  components: string[];
  imageType?: string;
}

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

/** True when the options choose anything less than everything. */
export function selects(options: SelectOptions | undefined): options is SelectOptions {
  return !!options && (!!options.releases?.length || !!options.components?.length || options.imageType !== undefined);
}

/** One listing of a binary in the catalog: a binary listed under several versions belongs to each of their releases. */
interface Listing {
  path: string;
  size: number;
  component: string;
  release: string;
  /** The product version it is listed under. */
  version: string;
  type: string;
}

function listingsOf(catalog: Catalog): Listing[] {
  const out: Listing[] = [];
  for (const [component, versions] of Object.entries(catalog.patches))
    for (const version of versions)
      for (const bundle of version.artifacts.bundles)
        for (const b of bundle.binaries)
          out.push({
            path: `${componentDir(component)}/${b.fileName}`,
            size: b.size,
            component,
            release: releaseOfVersion(version.productVersion),
            version: version.productVersion,
            type: bundle.type.toUpperCase(),
          });
  return out;
}

/**
 * The catalog entries each release needs, as `COMPONENT\0productVersion`, from
 * the one release plan verify, check and the status page read: every build a
 * release's bill of materials in the manifest names (the GA builds a patch
 * release keeps included, not only those numbered after it).
 */
function bomsOf(catalog: Catalog, manifestText: string | undefined): Map<string, Set<string>> {
  const releases = manifestText === undefined ? undefined : readManifestReleases(manifestText);
  const plans = planReleases(catalogEntriesOf(catalog), typeof releases === 'string' ? undefined : releases);
  const boms = new Map<string, Set<string>>();
  for (const plan of plans.releases) {
    const bom = boms.get(fullRelease(plan.version)) ?? new Set<string>();
    for (const e of plan.entries) bom.add(`${e.component}\0${e.productVersion}`);
    boms.set(fullRelease(plan.version), bom);
  }
  return boms;
}

/** A release as four numbers, so that 9.0.1 names 9.0.1.0. */
function fullRelease(version: string): string {
  const parts = version.trim().split('.');
  while (parts.length < 4) parts.push('0');
  return parts.join('.');
}

function unknown(what: string, given: string[], known: string[]): never {
  throw usageError(
    `${given.length === 1 ? `The ${what} ${given[0]} is` : `The ${what}s ${given.join(', ')} are`} not in the catalog, which names ${known.join(', ')}.`,
  );
}

/** The options checked against the catalog: an unknown release, component or image type is refused, naming the known ones. */
function checkOptions(options: SelectOptions, listings: Listing[], boms: Map<string, Set<string>>): Choice {
  const knownReleases = [...new Set([...listings.map((l) => l.release), ...boms.keys()])].sort(compareVersions);
  const knownComponents = [...new Set(listings.map((l) => l.component))].sort();
  const releases = [...new Set((options.releases ?? []).map(fullRelease))];
  const badReleases = releases.filter((r) => !knownReleases.includes(r));
  if (badReleases.length) unknown('release', badReleases, knownReleases);
  const components = [...new Set((options.components ?? []).map((c) => c.trim().toUpperCase()))];
  const badComponents = components.filter((c) => !knownComponents.includes(c));
  if (badComponents.length) unknown('component', badComponents, knownComponents);
  const imageType = options.imageType?.trim().toUpperCase();
  if (imageType !== undefined && !SELECT_IMAGE_TYPES.includes(imageType))
    throw usageError(`The image type ${options.imageType} is not one of ${SELECT_IMAGE_TYPES.join(', ')}.`);
  return { releases, components, ...(imageType !== undefined ? { imageType } : {}) };
}

/** The binaries whose listing matches the choice, and the rest the catalog names. */
function match(listings: Listing[], choice: Choice, boms: Map<string, Set<string>>): BinarySelection {
  const sizes = new Map<string, number>();
  const chosen = new Set<string>();
  const inRelease = (l: Listing) => choice.releases.some((r) => l.release === r || boms.get(r)?.has(`${l.component}\0${l.version}`));
  for (const l of listings) {
    sizes.set(l.path, l.size);
    if (choice.releases.length && !inRelease(l)) continue;
    if (choice.components.length && !choice.components.includes(l.component)) continue;
    if (choice.imageType !== undefined && l.type !== choice.imageType) continue;
    chosen.add(l.path);
  }
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
 */
export function selectBinaries(catalog: Catalog, options: SelectOptions, manifestText?: string): BinarySelection {
  const listings = listingsOf(catalog);
  const boms = bomsOf(catalog, manifestText);
  const checked = checkOptions(options, listings, boms);
  const selection = match(listings, checked, boms);
  if (selection.chosen.size === 0) throw usageError(`No binary of the catalog is of ${describeChoice(checked)}.`);
  return selection;
}

/** A choice made elsewhere (a pack's manifest records it) applied to a depot's catalog as it is now: nothing is refused. */
export function applyChoice(catalog: Catalog, choice: Choice, manifestText?: string): BinarySelection {
  return match(listingsOf(catalog), choice, bomsOf(catalog, manifestText));
}

/** The choice in words: "release 9.0.1.0, component VCENTER, image type PATCH". */
export function describeChoice(s: Choice): string {
  const parts: string[] = [];
  if (s.releases.length) parts.push(`release${s.releases.length > 1 ? 's' : ''} ${s.releases.join(', ')}`);
  if (s.components.length) parts.push(`component${s.components.length > 1 ? 's' : ''} ${s.components.join(', ')}`);
  if (s.imageType) parts.push(`image type ${s.imageType}`);
  return parts.join(', ');
}

/**
 * Verify's result for a depot that holds a selection: a binary left out on
 * purpose, or the folder of a component none of whose binaries were chosen,
 * is said (as info) but is not a defect of this depot.
 */
export function discountLeftOut(verify: VerifyResult, selection: BinarySelection): VerifyResult {
  const folders = new Set([...selection.chosen].map((p) => p.slice(0, p.lastIndexOf('/'))));
  const leftOut = (id: string, path: string | undefined) =>
    path !== undefined && ((id === 'binary.missing' && selection.leftOut.has(path)) || (id === 'layout.component.missing' && !folders.has(path)));
  const findings = verify.findings.map((f) =>
    f.severity === 'error' && leftOut(f.id, f.path) ? { ...f, severity: 'info' as const, message: `${f.message} Left out by the selection.` } : f,
  );
  return { ...verify, ok: !hasErrors(findings), findings };
}
