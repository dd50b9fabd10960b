import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { withDepotLock } from '../../depot/lock.js';
import { Checkpoints, VerifiedState, stateFileFor } from '../../depot/place.js';
import { type EsxChain, readEsxChain } from '../../esx/chain.js';
import { judgeProducts } from '../../esx/status.js';
import { DepotkitError, EXIT, describeFsError, usageError } from '../../util/errors.js';
import { type Finding, hasErrors } from '../../util/findings.js';
import { exists, writeJsonAtomic } from '../../util/fs.js';
import { ESX_LIMITS } from '../../util/limits.js';
import { MIRROR_DEFAULTS } from '../defaults.js';
import { esxChainSha256, formatEsxSeal, parseEsxSeal } from '../seal.js';
import { mirrorFiles } from '../mirror/binaries.js';
import { type Connection, openConnection } from '../mirror/connection.js';
import { DepotFiles } from '../mirror/local.js';
import { type FetchedFile, clearLeftTemps, dropTemps, writeTemp } from '../mirror/metadata.js';
import type { ProxyOptions } from '../../net/index.js';
import { placeMetadata, splitUnchanged } from '../mirror/publish.js';
import { RemoteReader, readRootIndex } from './remote.js';
import type { EsxMirrorReport } from './report.js';
import { type EsxSelectOptions, chooseMetadata, chooseVibs, selectionSummary } from './select.js';
import { parseEsxIndexUrl } from './url.js';

export type { EsxMirrorReport } from './report.js';
export type { EsxSelectOptions, EsxSelectionSummary } from './select.js';
export { TOKEN_PLACEHOLDER } from './url.js';

/** The proxy on the way (`proxy`, `proxyUser`, `proxyPassword`, `noProxy`), or the environment's, as depot mirror takes it. */
export interface EsxMirrorOptions extends ProxyOptions {
  /** The URL of the depot's root index; `{token}` in its path stands for `token`. */
  url: string;
  /** The vendor's download token, put where the URL says `{token}`: never printed, logged or written. */
  token?: string;
  out: string;
  caPems?: string[];
  /** VIBs downloaded at once (default 4). */
  concurrency?: number;
  /** Mirror into a folder holding an ESX depot mirrored from another URL (or not mirrored). */
  force?: boolean;
  timeoutMs?: number;
  minBytesPerSecond?: number;
  retries?: number;
  /** Only these products' and versions' VIBs (every metadata zip still). */
  select?: EsxSelectOptions;
  /** The seal carried from the other site (`esx <code>`): a source whose chain does not match is refused before anything is written. */
  expectSeal?: string;
  onStart?: (totalBytes: number) => void;
  onBytes?: (n: number) => void;
}

const LOCK_OPERATION = 'esx mirror';
/** Beside the verified state: the URL (as given, token-free) this folder mirrors. */
const STATE_FILE = 'esx-mirror.json';

/** Refuses to mirror over an ESX depot that is not a mirror of the same URL, unless forced. */
async function claimTarget(root: string, index: string, url: string, force: boolean): Promise<void> {
  const stateFile = join(dirname(stateFileFor(root)), STATE_FILE);
  const previous = await readFile(stateFile, 'utf8').then(
    (t) => (JSON.parse(t) as { url?: string }).url,
    () => undefined,
  );
  if (previous === url) return;
  if (!force && (await exists(join(root, index)))) {
    throw usageError(
      `${root} already holds an ESX depot${previous ? ` mirrored from ${previous}` : ' that is not a mirror'}; a mirror of ${url} would replace its indexes.`,
      'Use `force` to mirror into it anyway, or choose another `out`.',
    );
  }
  await writeJsonAtomic(stateFile, { url }, { force: true });
}

/** Where each document goes in the order of placing: metadata zips, then vendor indexes, the root index last. */
function rankOf(chain: EsxChain): (path: string) => number {
  const vendors = new Set(chain.vendors.map((v) => v.index));
  return (path) => (path === chain.index ? 2 : vendors.has(path) ? 1 : 0);
}

/**
 * Mirrors an ESX depot from the URL of its root index: the indexes and metadata zips (each within
 * its bound), then every VIB the metadata lists (or the chosen products'), each checked against its
 * stated size and SHA-256 as it lands and renamed into place only then; resumable; the indexes
 * written last, and only when every VIB they lead to is here.
 */
export async function mirrorEsx(options: EsxMirrorOptions): Promise<EsxMirrorReport> {
  const url = parseEsxIndexUrl(options.url, options.token);
  const expected = options.expectSeal === undefined ? undefined : parseEsxSeal(options.expectSeal);
  const concurrency = options.concurrency ?? MIRROR_DEFAULTS.concurrency;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1)
    throw usageError(`The downloads at once (\`concurrency\`) must be at least 1, not ${concurrency}.`);
  const conn = openConnection(url.depot, {
    caPems: options.caPems,
    timeoutMs: options.timeoutMs ?? MIRROR_DEFAULTS.timeoutMs,
    minBytesPerSecond: options.minBytesPerSecond ?? MIRROR_DEFAULTS.minBytesPerSecond,
    concurrency,
    proxy: options,
  });
  try {
    const reader = new RemoteReader(conn);
    await readRootIndex(reader, url.index, url.shown, ESX_LIMITS.indexBytes);
    const findings: Finding[] = [];
    const chain = await readEsxChain(reader, url.index, findings);
    const seal = formatEsxSeal(esxChainSha256(reader.fetched));
    if (expected !== undefined && seal.replace(/^esx /, '').replaceAll('-', '') !== expected) {
      throw new DepotkitError(
        `The ESX depot at ${url.shown} is not the one the seal given vouches for (its seal: ${seal}); nothing was written.`,
        EXIT.problems,
        'Mirror from the site whose seal you were given, or ask there for the seal of what it serves now.',
      );
    }
    const { metadata, chosen } = chooseMetadata(chain, options.select);
    const root = resolve(options.out);
    await mkdir(root, { recursive: true }).catch((err: unknown) => Promise.reject(describeFsError(err, root)));
    return await withDepotLock(root, LOCK_OPERATION, async (lock) => {
      await claimTarget(root, url.index, url.shown, options.force ?? false);
      const vibs = chooseVibs(chain, metadata);
      const selection = selectionSummary(options.select, chosen, vibs.leftOut);
      const report: EsxMirrorReport = {
        ok: false,
        url: url.shown,
        out: root,
        index: url.index,
        ...(conn.proxy ? { proxy: conn.proxy } : {}),
        lock: lock.tookOverFrom ? { tookOverFrom: lock.tookOverFrom } : {},
        findings,
        seal,
        vouchedBy: expected === undefined ? 'source' : 'seal',
        products: [],
        ...(selection ? { selection } : {}),
        metadata: { written: [], unchanged: [], held: false },
        downloaded: [],
        alreadyInPlace: [],
        failed: [...vibs.refused],
        replacedPartials: [],
        bytesDownloaded: 0,
        bytesHashedLocally: 0,
      };
      await mirrorInto(conn, root, chain, reader, vibs.wanted, report, { ...options, concurrency });
      return report;
    });
  } finally {
    conn.agent.destroy();
  }
}

async function mirrorInto(
  conn: Connection,
  root: string,
  chain: EsxChain,
  reader: RemoteReader,
  wanted: Parameters<typeof mirrorFiles>[3],
  report: EsxMirrorReport,
  options: EsxMirrorOptions & { concurrency: number },
): Promise<void> {
  const files = await DepotFiles.open(root);
  const checkpoints = new Checkpoints(await VerifiedState.load(stateFileFor(root)));
  const documents = [...reader.fetched.keys()];
  await clearLeftTemps(files, documents);
  await mirrorFiles(conn, files, checkpoints, wanted, report, {
    concurrency: options.concurrency,
    retries: options.retries ?? MIRROR_DEFAULTS.retries,
    onStart: options.onStart,
    onBytes: options.onBytes,
  });
  const fetched: FetchedFile[] = [];
  try {
    // An index must never name a file that is not here: with a VIB missing or a link of the chain broken, none is written.
    const held = report.failed.length > 0 || hasErrors(report.findings);
    if (!held) {
      for (const path of documents) fetched.push(await writeTemp(files, path, [reader.fetched.get(path)!]));
      const { changed, unchanged } = await splitUnchanged(files, fetched);
      report.metadata.unchanged = unchanged;
      report.metadata.written = await placeMetadata(files, checkpoints, changed, rankOf(chain));
    }
    report.metadata.held = held;
  } catch (err) {
    await dropTemps(fetched);
    throw err;
  } finally {
    await checkpoints.save().catch(() => undefined);
  }
  const present = new Set([...report.downloaded, ...report.alreadyInPlace].map((v) => v.path));
  report.products = judgeProducts(chain.products, chain.metadata, present);
  for (const list of [report.downloaded, report.alreadyInPlace, report.failed]) list.sort((a, b) => (a.path < b.path ? -1 : 1));
  // Held covers a VIB failed and a broken chain: what is left is a depot whose indexes lead only to verified files.
  report.ok = !report.metadata.held;
}
