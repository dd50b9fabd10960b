import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DEPOT_PATHS } from '../constants.js';
import type { Catalog } from '../depot/catalog.js';
import {
  type CatalogChange,
  type HclGuard,
  type MetadataChange,
  backupMetadata,
  backwardsRefusal,
  compareCatalogs,
  HCL_TIME_BYTES,
  hclOlderBecause,
  isHclPath,
  readHclTime,
  metadataChangeOf,
} from '../depot/metadata-guard.js';
import { type DepotLock, type DepotLockHolder, withDepotLock } from '../depot/lock.js';
import { type VerifyResult, verifyDepot } from '../depot/verify.js';
import { adviseFromMedia } from './unpack/media-fix.js';
import { DepotkitError, usageError } from '../util/errors.js';
import { exists, isDirectory } from '../util/fs.js';
import { parseJsonOrUndefined } from '../util/json.js';
import { MIRROR_LIMITS } from '../util/limits.js';
import { type PackFile, type PackManifest, esxOnlyOf, isEsxKind } from './format.js';
import { readCatalogOf } from './contents.js';
import { type ReleaseStatus, leftOutHere, releaseStatus } from './releases.js';
import { formatPackSeal } from './seal.js';
import { type SelectionSummary, applyChoice, checkedChoice } from './select.js';
import { describeChoice } from '../depot/selection.js';
import { recordSelection } from '../depot/selection.js';
import { TargetDepot } from './target.js';
import { type Authority, type PackCatalog, authorityFor, readPackCatalog, readPackText, refusalOf, tempLikeNames } from './unpack/authority.js';
import { findPack } from './unpack/find-pack.js';
import { type FailedFile, type VolumeReport, placeFromVolumes, placeMetadata, volumesOf } from './unpack/placing.js';
import { planFiles } from './unpack/plan.js';
import { ensureUnpackSpace } from './unpack/space.js';
import { type VouchOptions, type VouchedBy, checkVouchers } from './unpack/vouch.js';
import { type EsxAuthority, type UnpackEsxReport, esxRefusalOf, esxVerdict, inEsxFolder, placeEsxMetadata, readEsxAuthority } from './unpack/esx.js';
import { type Owner, whoseDepot } from './unpack/owner.js';

export type { VolumeReport, VolumeState } from './unpack/placing.js';
export type { VouchedBy } from './unpack/vouch.js';

export interface UnpackOptions extends VouchOptions {
  /** Folders holding the volumes (one per disc or drive), the manifest in at least one of them. */
  media: string[];
  /** The depot root to place the files in (made when absent). */
  out: string;
  /** Replace files that differ in a depot that is neither this pack's source nor its base. */
  force?: boolean;
  /** For the final checks: the key that signed a toolkit-made catalog. */
  signingCertPem?: string;
  onStart?: (totalBytes: number) => void;
  onBytes?: (n: number) => void;
}

export interface UnpackReport {
  /** Every file is in place with the catalog's or the manifest's content, every needed volume was whole, and verify passes. */
  ok: boolean;
  out: string;
  packId: string;
  delta: boolean;
  manifest: string;
  /** What vouched for the pack: only the media themselves, or a seal or a signature carried apart from them. */
  vouchedBy: VouchedBy;
  /** The seal of what arrived (`catalog <code> manifest <code>`), to compare with the one written down where the pack was made. */
  seal: string;
  /** The catalog every binary was held to: the pack's, the depot's (a delta that does not carry one), or none (the pack's could not be read). */
  catalogFrom: 'pack' | 'depot' | 'none';
  /** The depot's lock; `tookOverFrom` when a run that is gone had left it. */
  lock: { tookOverFrom?: DepotLockHolder };
  volumes: VolumeReport[];
  placed: { path: string; size: number }[];
  /** Already in place and verified (from the verified state, or hashed once and remembered). */
  alreadyInPlace: { path: string; size: number }[];
  failed: FailedFile[];
  /** Binaries the pack carries flagged (their content was not the catalog's at the source): not placed. */
  flagged: string[];
  /** `placed`: the metadata went into place; `held`: not, because files are missing and the depot's own metadata was kept. */
  metadata: 'placed' | 'held' | 'unchanged';
  /** What the pack's metadata changed against the depot's (releases and product versions added, removed) and where the replaced metadata was kept. */
  metadataChange?: MetadataChange;
  /**
   * The pack's vSAN HCL is older than the depot's (by its own timestamp) or dated after today: the depot's was
   * kept, or with `force` replaced (the replaced one kept with the metadata backup).
   */
  hcl?: HclGuard & { backup?: string };
  /**
   * A selective pack: what it chose, and the binaries of the catalog it left
   * out. The depot is judged on what was chosen: verify's findings about
   * binaries left out are info, not errors.
   */
  selection?: SelectionSummary;
  /** Files the pack's source no longer holds that are still here (`depotkit depot prune` lists them). */
  stale: string[];
  /** Bytes read from the volumes; and bytes of files already here that were read to be recognised. */
  bytesRead: number;
  bytesHashedInPlace: number;
  /** Temporary files of a killed run that were removed first. */
  clearedTemps: string[];
  releases: ReleaseStatus[];
  verify: VerifyResult;
  /** The ESX depots the pack carries: whether their indexes and metadata went in (held like PROD/'s), and `esx verify`'s verdict on them. */
  esx?: UnpackEsxReport;
  /** `esx`: the pack holds ESX depots alone; `PROD/` was not touched, nor judged (`verify` is empty, `releases` none). */
  holds?: 'esx';
}

/** Places a pack's files in a depot, checking every volume and every file on the way. */
export async function unpackDepot(options: UnpackOptions): Promise<UnpackReport> {
  if (options.media.length === 0) throw usageError('Name at least one folder holding the volumes.');
  const media = options.media.map((m) => resolve(m));
  for (const dir of media) if (!(await isDirectory(dir))) throw usageError(`${dir} is not a folder.`, 'Name the folders (mount points) that hold the volumes.');
  const start = await prepare(media, options);
  return withDepotLock(start.root, 'depot unpack', (lock) => unpackLocked(start, lock, options));
}

/**
 * What is known before the depot's lock is taken: the manifest, held to the
 * seal and the signature given before anything is read from the volumes or
 * written, and the pack's catalog. The manifest and the catalog are in a box
 * that placing empties, so that over a huge pack they are let go before
 * depot verify's checks run.
 */
interface Start {
  media: string[];
  root: string;
  manifestPath: string;
  vouchedBy: VouchedBy;
  seal: string;
  /** Why the pack's vSAN HCL may not replace the depot's, when it may not. */
  hclOlder?: string;
  box: { manifest?: PackManifest; packCatalog?: PackCatalog; packManifestText?: string; esx?: EsxAuthority };
}

async function prepare(media: string[], options: UnpackOptions): Promise<Start> {
  const found = await findPack(media);
  const vouchedBy = checkVouchers(found, options);
  const seal = formatPackSeal(found.manifest.source, found.sha256);
  // The tree (every file of the source, for a later --since) is not unpack's.
  const manifest = { ...found.manifest, tree: [] };
  const packCatalog = await readPackCatalog(media, manifest);
  // The release manifest names the releases the metadata adds or removes.
  const packManifestText = await readPackText(media, manifest, DEPOT_PATHS.manifest, MIRROR_LIMITS.manifestBytes);
  const root = resolve(options.out);
  // Every VIB is held to the ESX metadata, read and held to the manifest before anything is placed.
  const esx = await readEsxAuthority(media, manifest, root);
  // Refusals that need no lock come before the lock is taken, so that nothing is written for them.
  const owner = await whoseDepot(root, manifest, options.force ?? false);
  refuseOlder(root, packCatalog, owner, options.force ?? false);
  refuseStrangeSelection(manifest, packCatalog.state === 'carried' ? packCatalog.catalog : owner.current?.catalog, packManifestText);
  await ensureUnpackSpace(root, manifest);
  const hclOlder = await packHclOlder(media, manifest, root);
  return {
    media,
    root,
    manifestPath: found.path,
    vouchedBy,
    seal,
    ...(hclOlder ? { hclOlder } : {}),
    box: { manifest, packCatalog, packManifestText, ...(esx ? { esx } : {}) },
  };
}

/** Every metadata file by its own age: the pack's vSAN HCL against the depot's, by the time each carries. */
async function packHclOlder(media: string[], manifest: PackManifest, root: string): Promise<string | undefined> {
  const text = await readPackText(media, manifest, DEPOT_PATHS.hclLastUpdated, HCL_TIME_BYTES);
  return hclOlderBecause(text === undefined ? undefined : parseJsonOrUndefined(text), await readHclTime(join(root, DEPOT_PATHS.hclLastUpdated)));
}

/** An import never moves the depot's metadata backwards unless `force`: installers would then see releases vanish. */
function refuseOlder(root: string, packCatalog: PackCatalog, owner: Owner, force: boolean): void {
  if (packCatalog.state !== 'carried' || !owner.current || force) return;
  const refusal = backwardsRefusal(
    compareCatalogs(packCatalog.catalog, owner.current.catalog),
    "The pack's catalog",
    root,
    'unpacked',
    'Unpack a pack of the same or a newer release; `force` replaces the metadata anyway (the current one is kept as a backup).',
  );
  if (refusal) throw refusal;
}

/**
 * A selective pack's choice held to the catalog it is unpacked with, as pack held the options: a release or
 * component the catalog does not name, or a choice of no binary, is refused before anything is written (the
 * manifest of unsealed media is anyone's to edit, and the depot would record the choice).
 */
function refuseStrangeSelection(manifest: PackManifest, catalog: Catalog | undefined, manifestText: string | undefined): void {
  if (!manifest.selection || !catalog) return;
  try {
    if (applyChoice(catalog, checkedChoice(catalog, manifest.selection, manifestText), manifestText).chosen.size === 0)
      throw usageError(`it chooses no binary of the catalog (${describeChoice(manifest.selection)})`);
  } catch (err) {
    if (!(err instanceof DepotkitError)) throw err;
    throw usageError(
      `${manifest.packId}'s manifest records a selection that does not fit its catalog: ${err.message.replace(/\.$/, '')}.`,
      'Get the pack again from the packing site.',
    );
  }
}

interface Judged {
  /** The catalog every binary is held to; none when the pack's cannot be read and the depot lacks it. */
  authority?: Authority;
  /** Why the pack's catalog could not be read. */
  unreadable?: string;
  /** Files catalogs name that look like temporary files: never cleared as such. */
  keep: Set<string>;
  mayReplace: boolean;
  /** The pack's catalog is newer than the depot's: its metadata replaces the depot's without `force`. */
  forward: boolean;
  /** The depot had a catalog: its metadata is kept when files are missing. */
  hadCatalog: boolean;
  /** The pack's catalog against the depot's, when both are there and differ. */
  change?: CatalogChange;
  esx?: EsxAuthority;
}

/** Takes the manifest and the catalogs out of the box, judged under the lock; the catalogs parsed are let go here. */
async function judge(start: Start, force: boolean): Promise<{ manifest: PackManifest; judged: Judged }> {
  const { manifest, packCatalog, packManifestText, esx } = start.box;
  start.box = {};
  const owner = await whoseDepot(start.root, manifest!, force);
  const carried = packCatalog!.state === 'carried' ? packCatalog!.catalog : undefined;
  // A delta that does not carry the release manifest keeps the depot's.
  const currentManifest = owner.current ? await readFile(join(start.root, DEPOT_PATHS.manifest), 'utf8').catch(() => undefined) : undefined;
  const change =
    carried && owner.current && packCatalog!.state === 'carried' && !packCatalog!.bytes.equals(owner.current.bytes)
      ? compareCatalogs(carried, owner.current.catalog, { incoming: packManifestText ?? currentManifest, current: currentManifest })
      : undefined;
  const judged = {
    authority: authorityFor(packCatalog!, owner.current, manifest!),
    unreadable: packCatalog!.state === 'unreadable' ? packCatalog!.reason : undefined,
    keep: tempLikeNames(owner.current?.catalog, carried),
    mayReplace: owner.mayReplace,
    forward: change?.newer !== undefined,
    hadCatalog: owner.current !== undefined,
    change,
    ...(esx ? { esx } : {}),
  };
  return { manifest: manifest!, judged };
}

type Placed = Omit<UnpackReport, 'ok' | 'out' | 'manifest' | 'vouchedBy' | 'seal' | 'lock' | 'releases' | 'verify' | 'selection' | 'esx'> & {
  /** A selective pack's choice, as its manifest records it. */
  choice?: SelectionSummary;
  /** Whether the ESX depots' metadata went in. */
  esxMetadata?: UnpackReport['metadata'];
  /** The pack holds ESX depots alone. */
  esxOnly: boolean;
};

/** Verify's checks of the depot as it now is, judged on what a selective pack chose, and the releases it holds. */
async function judgeDepot(root: string, choice: SelectionSummary | undefined, signingCertPem: string | undefined) {
  // Recorded first: verify, check, the status page and /metrics judge the depot on what was chosen.
  await recordSelection(root, choice);
  const verify = await verifyDepot(root, { signingCertPem });
  const releases = releaseStatus(verify);
  if (!choice) return { verify, releases, selection: undefined };
  const catalog = await readCatalogOf(root).catch(() => undefined);
  if (!catalog) return { verify, releases, selection: summaryOf(choice) };
  const manifestText = await readFile(join(root, DEPOT_PATHS.manifest), 'utf8').catch(() => undefined);
  const selection = applyChoice(catalog.catalog, choice, manifestText);
  // Left out is what the depot lacks: binaries of other releases an earlier unpack placed are here.
  return { verify, releases, selection: leftOutHere(selection, verify, catalog.catalog) };
}

/** The recorded summary, without what a manifest may carry beside it. */
function summaryOf(s: SelectionSummary): SelectionSummary {
  return { releases: s.releases, components: s.components, ...(s.imageType ? { imageType: s.imageType } : {}), chosen: s.chosen, leftOut: s.leftOut };
}

/** What is judged of `PROD/` after a pack of ESX depots alone: nothing (its selection record stays as it was). */
const notJudged = (root: string): Awaited<ReturnType<typeof judgeDepot>> => ({
  verify: { dir: root, ok: true, findings: [], stats: { binaries: 0, present: 0, bytes: 0, hashed: 0 }, releases: [] },
  releases: [],
  selection: undefined,
});

async function unpackLocked(start: Start, lock: DepotLock, options: UnpackOptions): Promise<UnpackReport> {
  const { choice, esxMetadata, esxOnly, ...placed } = await placeAll(start, options);
  // What placing held (the manifest, the catalog's binaries, the verified state) is gone by now: verify reads the depot itself.
  const judged = esxOnly ? notJudged(start.root) : await judgeDepot(start.root, choice, options.signingCertPem);
  const { releases, selection } = judged;
  const verify = adviseFromMedia(judged.verify, placed.failed);
  const esx = esxMetadata ? await esxVerdict(start.root, esxMetadata) : undefined;
  const badVolumes = placed.volumes.some((v) => v.state !== 'ok' && v.state !== 'ranges' && v.state !== 'not-needed');
  return {
    ok: placed.failed.length === 0 && !badVolumes && placed.flagged.length === 0 && verify.ok,
    out: start.root,
    packId: placed.packId,
    delta: placed.delta,
    manifest: start.manifestPath,
    vouchedBy: start.vouchedBy,
    seal: start.seal,
    catalogFrom: placed.catalogFrom,
    lock: lock.tookOverFrom ? { tookOverFrom: lock.tookOverFrom } : {},
    volumes: placed.volumes,
    placed: placed.placed,
    alreadyInPlace: placed.alreadyInPlace,
    failed: placed.failed,
    flagged: placed.flagged,
    metadata: placed.metadata,
    ...(placed.metadataChange ? { metadataChange: placed.metadataChange } : {}),
    ...(placed.hcl ? { hcl: placed.hcl } : {}),
    stale: placed.stale,
    bytesRead: placed.bytesRead,
    bytesHashedInPlace: placed.bytesHashedInPlace,
    clearedTemps: placed.clearedTemps,
    ...(selection ? { selection } : {}),
    releases,
    verify,
    ...(esx ? { esx } : {}),
    ...(esxOnly ? { holds: 'esx' as const } : {}),
  };
}

/** Everything that writes: temporary files cleared, files held to the catalog, planned, read and placed, the metadata last. */
async function placeAll(start: Start, options: UnpackOptions): Promise<Placed> {
  const { manifest, judged } = await judge(start, options.force ?? false);
  const target = await TargetDepot.open(start.root, esxOnlyOf(manifest) === undefined);
  const clearedTemps = await target.clearTemps(judged.keep);

  // Every binary is held to the catalog before any of it is read.
  const refused: FailedFile[] = [];
  const candidates: PackFile[] = [];
  // The depot's newer vSAN HCL is kept unless `force`: the pack's files of it are not placed.
  const keepHcl = start.hclOlder !== undefined && !options.force;
  for (const file of manifest.files) {
    if (file.catalogMismatch || (keepHcl && isHclPath(file.path))) continue;
    const reason = isEsxKind(file.kind) ? esxRefusalOf(file, judged.esx) : refusalOf(file, judged.authority, judged.unreadable);
    if (reason) refused.push({ path: file.path, size: file.size, reason, volumes: volumesOf(file) });
    else candidates.push(file);
  }
  const plan = await planFiles(target, candidates, (f) => judged.mayReplace || (f.kind === 'metadata' && judged.forward));
  options.onStart?.(plan.needed.reduce((s, f) => s + f.size, 0));
  const placing = await placeFromVolumes(start.media, manifest, target, plan.needed, { onBytes: options.onBytes });

  const failed = [...refused, ...placing.failed];
  // PROD/'s metadata and the ESX depots' are each held back when files of their own are missing.
  const esxHeld = placing.held.filter((h) => inEsxFolder(manifest, h.path));
  const held = placing.held.filter((h) => !inEsxFolder(manifest, h.path));
  const placeIt = !failed.some((f) => !inEsxFolder(manifest, f.path)) || !judged.hadCatalog;
  // The metadata about to be replaced is kept beside the depot first.
  const backup = placeIt && (judged.change || start.hclOlder) && held.length ? await backupMetadata(start.root) : undefined;
  const metadata = await placeMetadata(target, held, placeIt);
  const esxMetadata = manifest.esx ? await placeEsxMetadata(target, manifest, esxHeld, failed) : undefined;
  const placed = [...placing.placed];
  if (metadata === 'placed') placed.push(...held.map((h) => ({ path: h.path, size: h.size })));
  if (esxMetadata === 'placed') placed.push(...esxHeld.map((h) => ({ path: h.path, size: h.size })));
  placed.sort((a, b) => a.path.localeCompare(b.path));
  await target.save();
  const stale: string[] = [];
  for (const path of manifest.removed) if (await exists(target.path(path))) stale.push(path);
  return {
    packId: manifest.packId,
    delta: manifest.since !== undefined,
    catalogFrom: judged.authority?.from ?? 'none',
    volumes: placing.volumes,
    placed,
    alreadyInPlace: plan.alreadyInPlace.map((f) => ({ path: f.path, size: f.size })),
    failed,
    flagged: manifest.files.filter((f) => f.catalogMismatch).map((f) => f.path),
    metadata,
    ...(judged.change ? { metadataChange: metadataChangeOf(judged.change, backup) } : {}),
    ...(start.hclOlder ? { hcl: { action: keepHcl ? 'kept' : 'replaced', because: start.hclOlder, ...(backup && !keepHcl ? { backup } : {}) } } : {}),
    stale,
    bytesRead: placing.bytesRead,
    bytesHashedInPlace: plan.bytesHashedInPlace,
    clearedTemps,
    ...(manifest.selection ? { choice: manifest.selection } : {}),
    ...(esxMetadata ? { esxMetadata } : {}),
    esxOnly: esxOnlyOf(manifest) !== undefined,
  };
}
