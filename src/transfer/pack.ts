import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DEPOT_ROOT_DIR, PACK_MANIFEST_FILE } from '../constants.js';
import { type PackVolume, isEsxKind, planVolumes } from './format.js';
import type { DepotRecord } from './record.js';
import { buildManifest } from './pack/manifest.js';
import { writePackOutputs } from './pack/outputs.js';
import { checkRequest, checkVolumeSize } from './pack/request.js';
import { selectEntries } from './pack/select.js';
import type { PackEsxReport } from './pack/esx.js';
import { ensurePackSpace } from './pack/space.js';
import { readEsxOnlySource, readSource } from './pack/source.js';
import { writeVolumes } from './pack/volumes.js';
import { type SelectOptions, type SelectionSummary, selects } from './select.js';
import type { EsxSelectOptions } from './esx-mirror/select.js';
import { describeFsError, usageError } from '../util/errors.js';

export interface PackOptions {
  /** The depot root (the folder that contains PROD/). */
  depot: string;
  /** Where the volumes, the manifest and SHA256SUMS are written. */
  out: string;
  /** Largest volume in bytes. */
  volumeSize: number;
  /** A depot folder or an earlier pack's manifest: only what it lacks or has different is packed. */
  since?: string;
  /** Replace the files of an earlier pack in `out` (and an earlier seal file). */
  force?: boolean;
  /** An operator's ECDSA P-256 private key (PEM): the manifest's exact bytes are signed, into depot-pack.json.sig beside it. */
  signingKeyPem?: string;
  /** A file outside the media to write the seal to (it is also in the report); never inside `out`. */
  sealFile?: string;
  /** Only these releases', components' or image type's binaries; all metadata still. */
  select?: SelectOptions;
  /** `false`: leave the ESX depots beside PROD/ (umds-patch-store/ ...) out; they are carried by default. */
  esx?: boolean;
  /** Carry the ESX depots alone, for a site that patches hosts only: PROD/ is neither read nor carried; the seal reads `esx <code> manifest <code>`. */
  esxOnly?: boolean;
  /** Only the VIBs of these ESX products and versions, as `esx mirror` chooses them; every ESX metadata zip still. */
  esxSelect?: EsxSelectOptions;
  now?: Date;
  onStart?: (totalBytes: number) => void;
  onBytes?: (n: number) => void;
}

export interface PackReport {
  /** Every binary the catalog names was carried with the right content. */
  ok: boolean;
  depot: string;
  out: string;
  packId: string;
  delta: boolean;
  /** What the delta was made against: its base's catalog, or for the ESX depots alone (`catalogSha256` null) the base's ESX metadata. */
  since?: { source: string; kind: DepotRecord['kind']; catalogSha256: string | null; esxSha256?: string; packId?: string };
  volumeSize: number;
  volumes: PackVolume[];
  manifest: string;
  files: number;
  /** Bytes of file data carried (volumes add 512-byte headers and padding). */
  bytes: number;
  /** With `since`: files left out because the other side has them. */
  unchanged: { files: number; bytes: number };
  /** With `since`: files the other side has that this depot no longer holds (prune removes them there). */
  removed: string[];
  missing: { path: string; size: number }[];
  wrongSize: { path: string; size: number; actualSize: number }[];
  /** Binaries whose content is not the catalog's: carried but flagged, never placed by unpack. */
  wrongChecksum: { path: string; expected: string; actual: string }[];
  /** Files in component folders the catalog does not name: not carried. */
  strays: string[];
  /** With `force`: files of an earlier pack that were removed from `out`. */
  replaced: string[];
  /**
   * The seal (`catalog <code> manifest <code>`): the catalog's and the
   * manifest's SHA-256 as codes a person carries apart from the media;
   * unpack's `expect` refuses media that do not match it.
   */
  seal: string;
  /** What the pack was made from: the catalog, or for the ESX depots alone their metadata (`esxMetadataSha256`). */
  catalogSha256?: string;
  esxSha256?: string;
  manifestSha256: string;
  /** Where the seal was written, when asked. */
  sealFile?: string;
  /** The manifest's signature, when a key was given. */
  signature?: { path: string; signerSpkiSha256: string };
  /** With a selection: what was chosen and what was left out (binaries and bytes). */
  selection?: SelectionSummary;
  /** The ESX depots carried (absent when the tree has none, or they were left out). */
  esx?: PackEsxReport;
}

/**
 * Writes a depot (or what it has that another lacks) as volumes for media
 * with size limits: the request checked, what is carried selected, the
 * volumes written, then the manifest and the files beside it.
 */
export async function packDepot(options: PackOptions): Promise<PackReport> {
  checkVolumeSize(options.volumeSize);
  checkEsxOnly(options);
  const esxSelect = options.esx === false ? false : options.esxSelect;
  const source = options.esxOnly ? await readEsxOnlySource(options.depot, options.esxSelect) : await readSource(options.depot, options.select, esxSelect);
  const request = await checkRequest(source.root, options);
  const { out, since } = request;
  checkBase(options.esxOnly ?? false, since);
  const selection = await selectEntries(source, since);
  const plan = planVolumes(selection.entries, options.volumeSize);
  // Space is judged before the folder is made or an earlier pack removed: a pack that cannot fit writes nothing.
  await ensurePackSpace(out, plan, options.force ? request.earlier : []);
  await mkdir(out, { recursive: true }).catch((err: unknown) => {
    throw describeFsError(err, out);
  });
  if (options.force) for (const name of request.earlier) await rm(join(out, name), { force: true });
  const total = selection.entries.reduce((sum, e) => sum + e.size, 0);
  const esx = source.esx ? source.esx.report : undefined;
  options.onStart?.(total);
  const written = await writeVolumes(selection.entries, plan, { root: source.root, out, force: options.force ?? false, onBytes: options.onBytes });

  const packId = randomUUID();
  const manifest = buildManifest({
    packId,
    created: options.now ?? new Date(),
    volumeSize: options.volumeSize,
    source,
    since,
    written,
    tree: selection.tree,
    removed: selection.removed,
  });
  const outputs = await writePackOutputs(out, manifest, {
    force: options.force ?? false,
    signingKeyPem: options.signingKeyPem,
    sealFile: request.sealFile,
    now: options.now,
  });
  return {
    ok: source.missing.length + source.wrongSize.length + written.wrongChecksum.length + esxProblems(esx) === 0,
    depot: source.root,
    out,
    packId,
    delta: since !== undefined,
    since: since && { catalogSha256: null, ...manifest.since, source: since.source, kind: since.kind },
    volumeSize: options.volumeSize,
    volumes: written.volumes,
    manifest: join(out, PACK_MANIFEST_FILE),
    files: written.packed.length,
    bytes: total,
    unchanged: selection.unchanged,
    removed: selection.removed,
    missing: source.missing,
    wrongSize: source.wrongSize,
    wrongChecksum: written.wrongChecksum,
    strays: source.strays,
    replaced: options.force ? request.earlier : [],
    seal: outputs.seal,
    ...('catalogSha256' in manifest.source ? { catalogSha256: manifest.source.catalogSha256 } : { esxSha256: manifest.source.esxSha256 }),
    manifestSha256: outputs.manifestSha256,
    ...(outputs.sealFile ? { sealFile: outputs.sealFile } : {}),
    ...(outputs.signature ? { signature: outputs.signature } : {}),
    ...(source.selection ? { selection: source.selection.summary } : {}),
    ...(esx ? { esx } : {}),
  };
}

/** What of the ESX depots could not be carried with something to vouch for it: a VIB missing is not one (a selective mirror leaves some out). */
const esxProblems = (esx: PackEsxReport | undefined): number => (esx ? esx.wrongSize.length + esx.noChecksum.length + esx.findings.length : 0);

/** The ESX depots alone: no `PROD/` file to choose (a delta of them compares their files only). */
function checkEsxOnly(options: PackOptions): void {
  if (!options.esxOnly) return;
  if (options.esx === false) throw usageError('`esxOnly` carries the ESX depots alone and `noEsx` leaves them out: give one of them.');
  if (selects(options.select))
    throw usageError("`esxOnly` carries the ESX depots alone: `release`, `component` and `imageType` choose among PROD/'s files and do not go with it.");
}

/** A delta of the ESX depots alone is made against ESX depots; a depot's, against a depot's PROD/. */
function checkBase(esxOnly: boolean, since: DepotRecord | undefined): void {
  if (!since) return;
  if (esxOnly && !since.esx)
    throw usageError(
      `\`since\` ${since.source} holds no ESX depot: a delta of the ESX depots alone is made against the ESX depots the other side has.`,
      'Pack them whole (without `since`), or name the folder or pack manifest that holds the ESX depots already there.',
    );
  if (!esxOnly && ![...since.files.values()].some((f) => !isEsxKind(f.kind)) && since.named.size === 0)
    throw usageError(
      `\`since\` ${since.source} holds ESX depots alone, no ${DEPOT_ROOT_DIR}/: a depot's delta is made against a depot.`,
      'Add `esxOnly` for a delta of the ESX depots alone, or pack the depot whole (without `since`).',
    );
}
