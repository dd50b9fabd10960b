import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BUNDLE_TYPES, DEPOT_SELECTION_FILE, DEPOT_STATE_DIR, INSTALLER_IMAGE_TYPES, componentDir } from '../constants.js';
import { usageError } from '../util/errors.js';
import { writeJsonAtomic } from '../util/fs.js';
import { isObject } from '../util/json.js';
import type { CatalogEntry } from './catalog-entries.js';
import type { ManifestRelease } from './manifest-releases.js';
import { planReleases } from './release-plan.js';
import { compareVersions } from '../util/versions.js';
import { releaseOfVersion } from './versions.js';

// A depot made with a selection (a selective mirror or unpack) records what was chosen, so that verify, check,
// the status page and /metrics judge the depot on it: a binary chosen and missing is an error, one left out is
// said as left out. Plain reading only: the serving process reads the record too.

/** The image types a selection takes: the catalog's bundle types, and the one upgrades are named by. */
export const SELECT_IMAGE_TYPES: readonly string[] = [...new Set<string>([...INSTALLER_IMAGE_TYPES, ...BUNDLE_TYPES])];

/** Which binaries to carry (pack, mirror) or to judge (check); metadata is always carried whole. Each list empty or absent means every one. */
export interface SelectOptions {
  releases?: string[];
  components?: string[];
  imageType?: string;
}

/** True when the options choose anything less than everything. */
export function selects(options: SelectOptions | undefined): options is SelectOptions {
  return !!options && (!!options.releases?.length || !!options.components?.length || options.imageType !== undefined);
}

/** Which binaries were chosen: each list empty means every one (releases as four numbers, components in capitals). */
export interface Choice {
  releases: string[];
  components: string[];
  imageType?: string;
}

/** The selection a depot records: every choice made into it since it last took the whole catalog. */
export interface DepotSelection {
  choices: Choice[];
  /** The binaries the choices take in the depot's catalog, by depot path. */
  chosen: ReadonlySet<string>;
  /** The choices in words: "component VCENTER", "release 9.0.1.0; release 9.0.2.0". */
  words: string;
}

/** Far above a real record (a few choices), low enough that a mistaken file is not read whole. */
const RECORD_LIMIT = 1024 * 1024;

export function selectionFileFor(root: string): string {
  return join(root, DEPOT_STATE_DIR, DEPOT_SELECTION_FILE);
}

/** A release as four numbers, so that 9.0.1 names 9.0.1.0. */
export function fullRelease(version: string): string {
  const parts = version.trim().split('.');
  while (parts.length < 4) parts.push('0');
  return parts.join('.');
}

/** The choice in words: "release 9.0.1.0; component ESX_HOST, VCENTER; image type PATCH". */
export function describeChoice(c: Choice): string {
  return [
    c.releases.length ? `release ${c.releases.join(', ')}` : '',
    c.components.length ? `component ${c.components.join(', ')}` : '',
    c.imageType ? `image type ${c.imageType}` : '',
  ]
    .filter(Boolean)
    .join('; ');
}

const strings = (v: unknown): string[] | undefined => (Array.isArray(v) && v.every((s) => typeof s === 'string') ? (v as string[]) : undefined);

function readChoice(v: unknown): Choice | undefined {
  if (!isObject(v)) return undefined;
  const releases = strings(v.releases);
  const components = strings(v.components);
  if (!releases || !components || (v.imageType !== undefined && typeof v.imageType !== 'string')) return undefined;
  return { releases, components, ...(typeof v.imageType === 'string' ? { imageType: v.imageType } : {}) };
}

/** The choices a depot records; undefined when it records none (it took the whole catalog) or the record cannot be read. */
export async function readSelection(root: string): Promise<Choice[] | undefined> {
  const file = selectionFileFor(root);
  try {
    const info = await stat(file);
    if (!info.isFile() || info.size > RECORD_LIMIT) return undefined;
    const value = JSON.parse(await readFile(file, 'utf8')) as unknown;
    return parseChoices(isObject(value) ? value.choices : undefined);
  } catch {
    return undefined;
  }
}

/** Recorded choices as the record (or serve's status JSON, `selectionChoices`) holds them; undefined unless every one is whole. */
export function parseChoices(value: unknown): Choice[] | undefined {
  const choices = Array.isArray(value) ? value.map(readChoice) : [];
  return choices.length && choices.every((c) => c !== undefined) ? (choices as Choice[]) : undefined;
}

/**
 * Records a choice made into the depot beside those made before (a second release's pack adds to the first's), or,
 * for a transfer of the whole catalog (`choice` undefined), that nothing is left out any more.
 */
export async function recordSelection(root: string, choice: Choice | undefined): Promise<void> {
  const file = selectionFileFor(root);
  if (!choice) return rm(file, { force: true });
  const before = (await readSelection(root)) ?? [];
  const made: Choice = { releases: choice.releases, components: choice.components, ...(choice.imageType !== undefined ? { imageType: choice.imageType } : {}) };
  const choices = [...new Map([...before, made].map((c) => [describeChoice(c), c])).values()];
  await writeJsonAtomic(file, { choices }, { force: true });
}

/** The bill of materials of each release the plan tells apart, as `COMPONENT\0productVersion`, by the release in four numbers. */
export function releaseBoms(entries: CatalogEntry[], manifest: ManifestRelease[] | undefined): Map<string, Set<string>> {
  const boms = new Map<string, Set<string>>();
  for (const plan of planReleases(entries, manifest).releases) {
    const bom = boms.get(fullRelease(plan.version)) ?? new Set<string>();
    for (const e of plan.entries) bom.add(`${e.component}\0${e.productVersion}`);
    boms.set(fullRelease(plan.version), bom);
  }
  return boms;
}

/**
 * The paths of the binaries a choice takes: a binary is chosen when one of its listings matches the releases (its
 * product version is of one, or one's bill of materials names it), the components and the image type.
 */
export function chosenPaths(entries: CatalogEntry[], boms: Map<string, Set<string>>, choice: Choice): Set<string> {
  const chosen = new Set<string>();
  for (const e of entries) {
    const release = releaseOfVersion(e.productVersion);
    if (choice.releases.length && !choice.releases.some((r) => release === r || boms.get(r)?.has(`${e.component}\0${e.productVersion}`))) continue;
    if (choice.components.length && !choice.components.includes(e.component)) continue;
    for (const b of e.binaries) if (choice.imageType === undefined || b.type === choice.imageType) chosen.add(`${componentDir(e.component)}/${b.fileName}`);
  }
  return chosen;
}

/** The depot's recorded selection applied to its catalog as it is now; undefined when it records none. */
export function selectionOf(choices: Choice[] | undefined, entries: CatalogEntry[], manifest: ManifestRelease[] | undefined): DepotSelection | undefined {
  if (!choices?.length) return undefined;
  const boms = releaseBoms(entries, manifest);
  const chosen = new Set(choices.flatMap((c) => [...chosenPaths(entries, boms, c)]));
  return { choices, chosen, words: choices.map(describeChoice).join(' and ') };
}

function unknown(what: string, given: string[], known: string[]): never {
  throw usageError(
    `${given.length === 1 ? `The ${what} ${given[0]} is` : `The ${what}s ${given.join(', ')} are`} not in the catalog, which names ${known.join(', ')}.`,
  );
}

/** The options checked against the catalog: an unknown release, component or image type is refused, naming the known ones. */
export function checkChoice(options: SelectOptions, entries: CatalogEntry[], boms: Map<string, Set<string>>): Choice {
  const knownReleases = [...new Set([...entries.map((e) => releaseOfVersion(e.productVersion)), ...boms.keys()])].sort(compareVersions);
  const knownComponents = [...new Set(entries.map((e) => e.component))].sort();
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
