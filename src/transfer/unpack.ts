import { rm, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Catalog } from '../depot/catalog.js';
import { type DepotLock, type DepotLockHolder, withDepotLock } from '../depot/lock.js';
import { type VerifyResult, verifyDepot } from '../depot/verify.js';
import { usageError } from '../util/errors.js';
import { isDirectory } from '../util/fs.js';
import type { PackFile, PackManifest } from './format.js';
import { readCatalogOf, sha256Hex } from './inventory.js';
import { type ReleaseStatus, releaseStatus } from './releases.js';
import { formatSeal } from './seal.js';
import { TargetDepot } from './target.js';
import { type PackCatalog, authorityFor, readPackCatalog, refusalOf, tempLikeNames } from './unpack/authority.js';
import { findPack } from './unpack/find-pack.js';
import { type FailedFile, type Held, type VolumeReport, placeFromVolumes, volumesOf } from './unpack/placing.js';
import { planFiles } from './unpack/plan.js';
import { type VouchOptions, type VouchedBy, checkVouchers } from './unpack/vouch.js';

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
  /** Files the pack's source no longer holds that are still here (`depotkit depot prune` lists them). */
  stale: string[];
  /** Bytes read from the volumes; and bytes of files already here that were read to be recognised. */
  bytesRead: number;
  bytesHashedInPlace: number;
  /** Temporary files of a killed run that were removed first. */
  clearedTemps: string[];
  releases: ReleaseStatus[];
  verify: VerifyResult;
}

interface Owner {
  current?: { catalog: Catalog; bytes: Buffer };
  /** Files of the depot that differ may be replaced: it is this pack's source (a resumed run) or its base (a delta), or --force. */
  mayReplace: boolean;
}

/** Whose depot `root` is, and whether the pack may go there: a delta alone is not a depot, it belongs on the one it was made against. */
async function whoseDepot(root: string, manifest: PackManifest, force: boolean): Promise<Owner> {
  const current = await readCatalogOf(root).catch(() => undefined);
  const currentSha = current ? sha256Hex(current.bytes) : undefined;
  const ours =
    currentSha !== undefined && (currentSha === manifest.source.catalogSha256 || (manifest.since !== undefined && currentSha === manifest.since.catalogSha256));
  if (manifest.since && !ours && !force) {
    throw usageError(
      `${manifest.packId} is a delta made against a depot whose catalog is not the one in ${root} (${current ? 'another catalog' : 'no catalog'}): unpacked there it would not make a whole depot.`,
      'Unpack it onto the depot it was made against (the older release), or unpack the full pack of the older release first; --force unpacks it anyway.',
    );
  }
  return { current, mayReplace: force || ours };
}

/** Places a pack's files in a depot, checking every volume and every file on the way. */
export async function unpackDepot(options: UnpackOptions): Promise<UnpackReport> {
  if (options.media.length === 0) throw usageError('Name at least one folder holding the volumes.');
  const media = options.media.map((m) => resolve(m));
  for (const dir of media) if (!(await isDirectory(dir))) throw usageError(`${dir} is not a folder.`, 'Name the folders (mount points) that hold the volumes.');
  const found = await findPack(media);
  // Before anything is read from the volumes or written: the seal and the signature carried apart from the media.
  const vouchedBy = checkVouchers(found, options);
  const { manifest } = found;
  const seal = formatSeal({ catalogSha256: manifest.source.catalogSha256, manifestSha256: found.sha256 });
  const packCatalog = await readPackCatalog(media, manifest);
  const root = resolve(options.out);
  // Refusals that need no lock come before the lock is taken, so that nothing is written for them.
  await whoseDepot(root, manifest, options.force ?? false);
  return withDepotLock(root, 'depot unpack', async (lock) => {
    const owner = await whoseDepot(root, manifest, options.force ?? false);
    const head = { media, manifest, manifestPath: found.path, vouchedBy, seal, packCatalog, owner, lock };
    return unpackLocked(head, options);
  });
}

interface Head {
  media: string[];
  manifest: PackManifest;
  manifestPath: string;
  vouchedBy: VouchedBy;
  seal: string;
  packCatalog: PackCatalog;
  owner: Owner;
  lock: DepotLock;
}

async function unpackLocked(head: Head, options: UnpackOptions): Promise<UnpackReport> {
  const { manifest, packCatalog, owner } = head;
  const authority = authorityFor(packCatalog, owner.current, manifest);
  const target = await TargetDepot.open(resolve(options.out));
  const keep = tempLikeNames(owner.current?.catalog, packCatalog.state === 'carried' ? packCatalog.catalog : undefined);
  const clearedTemps = await target.clearTemps(keep);

  // Every binary is held to the catalog before any of it is read.
  const unreadable = packCatalog.state === 'unreadable' ? packCatalog.reason : undefined;
  const refused: FailedFile[] = [];
  const candidates: PackFile[] = [];
  for (const file of manifest.files) {
    if (file.catalogMismatch) continue;
    const reason = refusalOf(file, authority, unreadable);
    if (reason) refused.push({ path: file.path, size: file.size, reason, volumes: volumesOf(file) });
    else candidates.push(file);
  }
  const plan = await planFiles(target, candidates, owner.mayReplace);
  options.onStart?.(plan.needed.reduce((s, f) => s + f.size, 0));
  const placing = await placeFromVolumes(head.media, manifest, target, plan.needed, { onBytes: options.onBytes });

  const failed = [...refused, ...placing.failed];
  const metadata = await placeMetadata(target, placing.held, failed.length === 0 || owner.current === undefined);
  const placed = [...placing.placed, ...(metadata === 'placed' ? placing.held.map((h) => ({ path: h.path, size: h.size })) : [])];
  placed.sort((a, b) => a.path.localeCompare(b.path));
  await target.save();
  const stale: string[] = [];
  for (const path of manifest.removed)
    if (
      await stat(target.path(path)).then(
        () => true,
        () => false,
      )
    )
      stale.push(path);

  const verify = await verifyDepot(target.root, { signingCertPem: options.signingCertPem });
  const catalog = await readCatalogOf(target.root).catch(() => undefined);
  const releases = catalog ? await releaseStatus(target.root, catalog.catalog) : [];
  const flagged = manifest.files.filter((f) => f.catalogMismatch).map((f) => f.path);
  const badVolumes = placing.volumes.some((v) => v.state !== 'ok' && v.state !== 'ranges' && v.state !== 'not-needed');
  return {
    ok: failed.length === 0 && !badVolumes && flagged.length === 0 && verify.ok,
    out: target.root,
    packId: manifest.packId,
    delta: manifest.since !== undefined,
    manifest: head.manifestPath,
    vouchedBy: head.vouchedBy,
    seal: head.seal,
    catalogFrom: authority?.from ?? 'none',
    lock: head.lock.tookOverFrom ? { tookOverFrom: head.lock.tookOverFrom } : {},
    volumes: placing.volumes,
    placed,
    alreadyInPlace: plan.alreadyInPlace.map((f) => ({ path: f.path, size: f.size })),
    failed,
    flagged,
    metadata,
    stale,
    bytesRead: placing.bytesRead,
    bytesHashedInPlace: plan.bytesHashedInPlace,
    clearedTemps,
    releases,
    verify,
  };
}

/**
 * The metadata goes in last, and over the depot's own only when everything it
 * names came through; into a depot that had none it goes anyway, so that
 * verify can say exactly what is missing.
 */
async function placeMetadata(target: TargetDepot, held: Held[], place: boolean): Promise<UnpackReport['metadata']> {
  if (held.length === 0) return 'unchanged';
  if (place) {
    await target.placeHeld(held);
    return 'placed';
  }
  for (const h of held) await rm(h.temp, { force: true });
  return 'held';
}
