import { readFile, readdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { DEPOT_PATHS, DEPOT_ROOT_DIR, MIRROR_METADATA_PATHS, MIRROR_STATE_FILE, TEMP_PREFIX } from '../constants.js';
import { type DepotLock, withDepotLock } from '../depot/lock.js';
import { type CatalogChange, type MetadataChange, backupMetadata, hclOlderBecause, isHclPath, metadataChangeOf, readHclTime } from '../depot/metadata-guard.js';
import { Checkpoints, stateFileFor } from '../depot/place.js';
import { verifyDepot } from '../depot/verify.js';
import { type DepotUrl, parseDepotUrl } from '../util/depot-url.js';
import { usageError } from '../util/errors.js';
import { writeJsonAtomic } from '../util/fs.js';
import { MIRROR_LIMITS } from '../util/limits.js';
import { MIRROR_DEFAULTS } from './defaults.js';
import { readCatalogOf } from './contents.js';
import { mirrorFiles } from './mirror/binaries.js';
import { type Connection, openConnection } from './mirror/connection.js';
import { DepotFiles } from './mirror/local.js';
import { type FetchedFile, MetadataBudget, clearLeftTemps, dropTemps, fetchMetadataFiles, writeTemp } from './mirror/metadata.js';
import { hashLocal, placeMetadata, splitUnchanged } from './mirror/publish.js';
import { type MirrorProgress, type MirrorReport, sortReport } from './mirror/report.js';
import type { ProxyOptions } from '../net/index.js';
import { type Source, readSource } from './mirror/source.js';
import { ensureMirrorSpace } from './mirror/space.js';
import { findUpgradeMetadata } from './mirror/upgrade.js';
import { leftOutHere, releaseStatus } from './releases.js';
import { type Seal, formatSeal, parseSeal } from './seal.js';
import { type BinarySelection, type SelectOptions } from './select.js';
import { recordSelection } from '../depot/selection.js';
import { TargetDepot } from './target.js';

export { partialPathFor } from './mirror/local.js';
export type { MirrorReport } from './mirror/report.js';
export type { UpgradeMetadataSource } from './mirror/upgrade.js';

/** The proxy on the way to the depot (`proxy`, `proxyUser`, `proxyPassword`, `noProxy`), or the environment's: see ProxyOptions. */
export interface MirrorOptions extends ProxyOptions {
  /** The served depot: the URL an installer is given (the folder that contains PROD/). */
  url: string;
  out: string;
  /** PEM CA certificates to trust (as the installer's own store); Node's public roots when absent. */
  caPems?: string[];
  user?: string;
  password?: string;
  /** Send the credentials over plain HTTP; without it an http:// URL with a user is refused. */
  allowHttpCredentials?: boolean;
  /** Binaries downloaded at once (default 4). */
  concurrency?: number;
  /** Mirror into a folder that holds another depot (not a mirror of this URL), or whose catalog is newer than the source's (its metadata is kept as a backup). */
  force?: boolean;
  /** Idle time allowed for an answer's headers and between body bytes (default 60 s); also the span the slowest speed is judged over. */
  timeoutMs?: number;
  /** The slowest average speed over `timeoutMs` before a transfer is given up (default 1 KiB/s). */
  minBytesPerSecond?: number;
  /** Attempts after a network failure or a 5xx answer, each resuming where the last stopped (default 3). */
  retries?: number;
  /**
   * The seal a person carried from the other site (`catalog <code>`, or the
   * code alone): a source whose catalog does not match it is refused before
   * anything is written.
   */
  expectSeal?: string;
  signingCertPem?: string;
  /** Only these releases', components' or image type's binaries (all metadata still); the rest already here are kept. */
  select?: SelectOptions;
  onStart?: (totalBytes: number) => void;
  onBytes?: (n: number) => void;
}

/** The holder's words in a depot's lock. */
const LOCK_OPERATION = 'depot mirror';

interface Settings {
  depot: DepotUrl;
  concurrency: number;
  retries: number;
  seal?: Seal;
}

function readSettings(options: MirrorOptions): Settings {
  const { url: depot, findings } = parseDepotUrl(options.url);
  const prod = findings.find((f) => f.id === 'url.ends-with-prod');
  if (prod) throw usageError(`${options.url} ends in /${DEPOT_ROOT_DIR}; give the folder that contains it.`, prod.fix);
  if (options.user !== undefined && !depot.https && !options.allowHttpCredentials) {
    throw usageError(
      `${options.url} is plain HTTP: the password of "${options.user}" would cross the network in clear text.`,
      'Use the https:// URL, or `allowHttpCredentials` if this network is yours.',
    );
  }
  const concurrency = options.concurrency ?? MIRROR_DEFAULTS.concurrency;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1)
    throw usageError(`The downloads at once (\`concurrency\`) must be at least 1, not ${concurrency}.`);
  const seal = options.expectSeal === undefined ? undefined : parseSeal(options.expectSeal);
  return { depot, concurrency, retries: options.retries ?? MIRROR_DEFAULTS.retries, ...(seal ? { seal } : {}) };
}

/** Refuses to write a mirror over a depot that is not a mirror of the same URL, unless forced. */
async function claimTarget(root: string, base: string, force: boolean): Promise<void> {
  const stateFile = join(dirname(stateFileFor(root)), MIRROR_STATE_FILE);
  const previous = await readFile(stateFile, 'utf8').then(
    (t) => (JSON.parse(t) as { url?: string }).url,
    () => undefined,
  );
  if (previous === base) return;
  const held = await readdir(join(root, DEPOT_ROOT_DIR)).then(
    (e) => e.length > 0,
    () => false,
  );
  if (held && !force) {
    throw usageError(
      `${root} already holds a depot${previous ? ` mirrored from ${previous}` : ' that is not a mirror'}; a mirror of ${base} would replace its files.`,
      'Use `force` to mirror into it anyway, or choose another `out`.',
    );
  }
  await writeJsonAtomic(stateFile, { url: base }, { force: true });
}

/** Replicates a served depot over HTTPS: metadata, then every binary its catalog names, resumable and verified. */
export async function mirrorDepot(options: MirrorOptions): Promise<MirrorReport> {
  const settings = readSettings(options);
  const conn = openConnection(settings.depot, {
    caPems: options.caPems,
    user: options.user,
    password: options.password,
    timeoutMs: options.timeoutMs ?? MIRROR_DEFAULTS.timeoutMs,
    minBytesPerSecond: options.minBytesPerSecond ?? MIRROR_DEFAULTS.minBytesPerSecond,
    concurrency: settings.concurrency,
    proxy: options,
  });
  try {
    const root = resolve(options.out);
    const source = await readSource(conn, settings.seal, options.select, { root, force: options.force ?? false });
    // Refusals and the space check need no lock: nothing is written for them.
    await ensureMirrorSpace(root, source.binaries, source.bytes!.length);
    // One writer per depot: a second mirror (or unpack) into it is refused, a dead one's lock taken over.
    return await withDepotLock(root, LOCK_OPERATION, async (lock) => {
      const done = await mirrorInto(conn, settings, source, lock, options);
      // Depot verify reads the catalog itself: the mirror's own view of it, and its state, are let go first.
      source.binaries = [];
      return finish(root, done, options, source.selection);
    });
  } finally {
    conn.agent.destroy();
  }
}

/** Everything but the binaries, into temporary files: the catalog (then dropped from memory), the other metadata, the vCenter upgrade metadata. */
async function fetchMetadata(conn: Connection, files: DepotFiles, source: Source, concurrency: number) {
  const budget = new MetadataBudget();
  budget.take(source.bytes!.length);
  const others = [...MIRROR_METADATA_PATHS.required.filter((p) => p !== DEPOT_PATHS.catalog), ...MIRROR_METADATA_PATHS.optional];
  await clearLeftTemps(files, [DEPOT_PATHS.catalog, ...others]);
  const catalog = await writeTemp(files, DEPOT_PATHS.catalog, [source.bytes!]);
  source.bytes = undefined;
  let fetched: FetchedFile[] = [catalog];
  try {
    const main = await fetchMetadataFiles(conn, files, others, concurrency, budget);
    fetched = [...fetched, ...main.fetched];
    const upgrade = await findUpgradeMetadata(conn);
    await clearLeftTemps(files, upgrade.paths);
    // A listed upgrade folder need not hold every file of the set: what the server has is copied.
    const upgradeFiles = await fetchMetadataFiles(conn, files, upgrade.paths, concurrency, budget);
    fetched = [...fetched, ...upgradeFiles.fetched];
    const required = new Set<string>(MIRROR_METADATA_PATHS.required);
    return { fetched, missing: main.absent.filter((p) => required.has(p)).sort(), upgrade: { source: upgrade.source, files: upgradeFiles.fetched.length } };
  } catch (err) {
    await dropTemps(fetched);
    throw err;
  }
}

async function mirrorInto(
  conn: Connection,
  settings: Settings,
  source: Source,
  lock: DepotLock,
  options: MirrorOptions,
): Promise<MirrorProgress & { stale: number }> {
  const target = await TargetDepot.open(options.out);
  await claimTarget(target.root, settings.depot.base.href, options.force ?? false);
  const files = await DepotFiles.open(target.root);
  const checkpoints = new Checkpoints(target.state);
  const currentCatalog = await hashLocal(target.path(DEPOT_PATHS.catalog), MIRROR_LIMITS.catalogBytes);
  const metadata = await fetchMetadata(conn, files, source, settings.concurrency);
  const report: MirrorProgress = {
    url: settings.depot.base.href,
    out: target.root,
    vouchedBy: settings.seal ? 'seal' : 'source',
    seal: formatSeal({ catalogSha256: source.sha256 }),
    lock: lock.tookOverFrom ? { tookOverFrom: lock.tookOverFrom } : {},
    ...(conn.proxy ? { proxy: conn.proxy } : {}),
    metadata: { written: [], unchanged: [], missing: metadata.missing, held: false },
    upgradeMetadata: metadata.upgrade,
    downloaded: [],
    alreadyInPlace: [],
    failed: [],
    replacedPartials: [],
    bytesDownloaded: 0,
    bytesHashedLocally: 0,
  };
  try {
    await mirrorFiles(conn, files, checkpoints, source.binaries, report, { ...settings, onStart: options.onStart, onBytes: options.onBytes });
    sortReport(report);
    report.metadataChange = await publish(
      files,
      checkpoints,
      metadata.fetched,
      report,
      currentCatalog !== undefined && currentCatalog !== source.sha256,
      source.change,
      options.force ?? false,
    );
  } catch (err) {
    // Temporary files go (those already renamed are not there any more); what was placed is remembered.
    await dropTemps(metadata.fetched);
    await checkpoints.save().catch(() => undefined);
    throw err;
  }
  await checkpoints.save();
  // A binary left out by a selection is still the catalog's: not stale.
  const named = new Set([...source.binaries.map((b) => b.path), ...(source.selection?.leftOut ?? [])]);
  return { ...report, stale: await countStale(target.root, named) };
}

/**
 * Metadata last, and over the depot's own only when every binary it names
 * came through (or the depot's catalog is this one already): a depot keeps a
 * catalog whose binaries it holds.
 */
async function publish(
  files: DepotFiles,
  checkpoints: Checkpoints,
  fetched: FetchedFile[],
  report: MirrorProgress,
  otherCatalogHere: boolean,
  change: CatalogChange | undefined,
  force: boolean,
): Promise<MetadataChange | undefined> {
  const split = await splitUnchanged(files, fetched);
  report.metadata.unchanged = split.unchanged;
  let changed = split.changed;
  if (changed.length && report.failed.length && otherCatalogHere) {
    report.metadata.held = true;
    await dropTemps(changed);
    return undefined;
  }
  // Every metadata file by its own age: the depot's newer vSAN HCL is kept unless `force`.
  const incomingHcl = changed.find((f) => f.path === DEPOT_PATHS.hclLastUpdated);
  const older = incomingHcl && hclOlderBecause(await readHclTime(incomingHcl.temp), await readHclTime(join(files.root, DEPOT_PATHS.hclLastUpdated)));
  if (older && !force) {
    await dropTemps(changed.filter((f) => isHclPath(f.path)));
    changed = changed.filter((f) => !isHclPath(f.path));
  }
  // The metadata about to be replaced is kept beside the depot first.
  const backup = (change || (older && force)) && changed.length ? await backupMetadata(files.root) : undefined;
  if (older) report.hcl = { action: force ? 'replaced' : 'kept', because: older, ...(backup && force ? { backup } : {}) };
  report.metadata.written = (await placeMetadata(files, checkpoints, changed)).sort();
  return change && metadataChangeOf(change, backup);
}

/** The depot checked as a whole once the mirror is done: verify, and the releases it holds. */
async function finish(
  root: string,
  report: MirrorProgress & { stale: number },
  options: MirrorOptions,
  selection: BinarySelection | undefined,
): Promise<MirrorReport> {
  // Recorded first: verify, check, the status page and /metrics judge the depot on what was chosen.
  await recordSelection(root, selection?.summary);
  const verify = await verifyDepot(root, { signingCertPem: options.signingCertPem });
  // Left out is what the depot lacks: binaries of other releases an earlier mirror placed are here.
  const now = selection ? await readCatalogOf(root).catch(() => undefined) : undefined;
  const summary = selection && (now ? leftOutHere(selection, verify, now.catalog) : selection.summary);
  return {
    ...report,
    ok: report.failed.length === 0 && !report.metadata.held && verify.ok,
    ...(summary ? { selection: summary } : {}),
    releases: releaseStatus(verify),
    verify,
  };
}

async function countStale(root: string, named: Set<string>): Promise<number> {
  let stale = 0;
  const comp = join(root, DEPOT_PATHS.comp);
  for (const component of await readdir(comp).catch(() => [] as string[])) {
    for (const name of await readdir(join(comp, component)).catch(() => [] as string[])) {
      const path = `${DEPOT_PATHS.comp}/${component}/${name}`;
      if (name.startsWith(TEMP_PREFIX) || named.has(path)) continue;
      if (
        await stat(join(root, path)).then(
          (s) => s.isFile(),
          () => false,
        )
      )
        stale++;
    }
  }
  return stale;
}
