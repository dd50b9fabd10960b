import { createHash } from 'node:crypto';
import { limiter } from '../util/limit.js';
import type { CatalogBinary } from '../depot/catalog.js';
import type { SeenFile } from '../depot/release-status.js';
import type { Finding } from '../util/findings.js';
import { type Credentials, requestFailed, statusFinding } from './answers.js';
import { CHECK_DEFAULTS } from './defaults.js';
import { type DepotClient, contentLength, fetchFile, streamFile } from './http.js';
import { type DepotUrl, depotFileUrl } from '../util/depot-url.js';
import { connectionsWorth } from './pool.js';

export interface BinaryStats {
  binaries: number;
  checked: number;
  hashed: number;
  bytes: number;
}

/** What the binary phases need of the check's options. */
export interface BinaryOptions {
  deep?: boolean;
  concurrency?: number;
  onStart?: (totalBytes: number) => void;
  onBytes?: (n: number) => void;
}

interface Sweep {
  client: DepotClient;
  depot: DepotUrl;
  credentials: Credentials;
  /** Collected apart and sorted, so concurrent requests still give a stable report. */
  findings: Finding[];
  stats: BinaryStats;
  /** What was seen of each binary, for the releases' verdicts. */
  seen: Map<string, SeenFile>;
  onBytes?: (n: number) => void;
}

/** What an answer other than 200 says of a file: not there (404), or there but not to be had. */
const seenOfStatus = (status: number): SeenFile => (status === 404 ? { state: 'missing' } : { state: 'unreadable' });

/**
 * Every binary the catalog names: present, with the catalog's size; with `deep`, its SHA-256. Its findings sorted
 * by path; what was seen of each binary goes into `seen`.
 */
export async function checkBinaries(
  client: DepotClient,
  depot: DepotUrl,
  binaries: CatalogBinary[],
  credentials: Credentials,
  options: BinaryOptions,
  stats: BinaryStats,
  seen: Map<string, SeenFile>,
): Promise<Finding[]> {
  const sweep: Sweep = { client, depot, credentials, findings: [], stats, seen, onBytes: options.onBytes };
  stats.binaries = binaries.length;
  const concurrency = Math.max(1, options.concurrency ?? CHECK_DEFAULTS.concurrency);
  client.allowConnections(connectionsWorth(binaries.length, client.timing));
  const limit = limiter(concurrency);
  const present: CatalogBinary[] = [];
  await Promise.all(
    binaries.map((binary) =>
      limit(async () => {
        if (await sizeServed(sweep, binary)) present.push(binary);
      }),
    ),
  );
  stats.bytes = present.reduce((sum, b) => sum + b.size, 0);
  if (options.deep) {
    options.onStart?.(stats.bytes);
    const downloads = Math.min(CHECK_DEFAULTS.hashConcurrency, concurrency);
    // A download holds its connection to the end: one each.
    client.allowConnections(downloads);
    const hashLimit = limiter(downloads);
    await Promise.all(present.map((binary) => hashLimit(() => contentServed(sweep, binary))));
  }
  return sweep.findings.sort((a, b) => (a.path ?? '').localeCompare(b.path ?? ''));
}

/** HEAD of one binary: is it there, with the catalog's size? */
async function sizeServed({ client, depot, credentials, findings, stats, seen }: Sweep, binary: CatalogBinary): Promise<boolean> {
  let head;
  try {
    head = await fetchFile(client, depotFileUrl(depot, binary.path), 'HEAD', credentials.header);
  } catch (err) {
    findings.push(requestFailed('binary', binary.path, 'HEAD', err));
    seen.set(binary.path, { state: 'unreadable' });
    return false;
  }
  stats.checked++;
  if (head.status !== 200) {
    seen.set(binary.path, seenOfStatus(head.status));
    const f = statusFinding('binary', binary.path, 'HEAD', head.status, credentials);
    findings.push({
      ...f,
      installer: `fails the ${binary.component} download`,
      fix:
        f.id === 'binary.missing'
          ? `Place ${binary.fileName} at ${binary.path} (\`buildDepot\` \`metadata\` <zip-or-dir> \`binaries\` <folder> \`out\` <depot-dir>).`
          : f.fix,
    });
    return false;
  }
  const length = contentLength(head);
  if (length !== binary.size) {
    seen.set(binary.path, length === undefined ? { state: 'wrong-size' } : { state: 'wrong-size', actualSize: length });
    findings.push({
      id: 'binary.size-mismatch',
      severity: 'error',
      path: binary.path,
      message: `${binary.path} is served with ${length ?? 'no'} Content-Length; the catalog says ${binary.size} bytes.`,
      evidence: { served: length, expected: binary.size },
      installer: `fails the ${binary.component} download's size check`,
      fix: 'Download the file again and place it with `buildDepot`.',
    });
    return false;
  }
  seen.set(binary.path, { state: 'present' });
  return true;
}

/** GET of one binary, hashed as it streams (never held whole), against the catalog's size and SHA-256. */
async function contentServed({ client, depot, credentials, findings, stats, seen, onBytes }: Sweep, binary: CatalogBinary): Promise<void> {
  const hash = createHash('sha256');
  let answer: { status: number; bytes: number };
  try {
    answer = await streamFile(client, depotFileUrl(depot, binary.path), credentials.header, binary.size, (chunk) => {
      hash.update(chunk);
      onBytes?.(chunk.length);
    });
  } catch (err) {
    findings.push(requestFailed('binary', binary.path, 'GET', err));
    seen.set(binary.path, { state: 'unreadable' });
    return;
  }
  if (answer.status !== 200) {
    findings.push(statusFinding('binary', binary.path, 'GET', answer.status, credentials));
    seen.set(binary.path, seenOfStatus(answer.status));
    return;
  }
  if (answer.bytes > binary.size) {
    seen.set(binary.path, { state: 'wrong-size' });
    findings.push({
      id: 'binary.size-mismatch',
      severity: 'error',
      path: binary.path,
      message: `GET ${binary.path} sent more than the catalog's ${binary.size} bytes; the check stopped reading one byte past them.`,
      evidence: { served: `more than ${binary.size}`, expected: binary.size },
      installer: `fails the ${binary.component} download's size check`,
      fix: 'Serve HEAD and GET from the same file (`serveDepot`); download the file again and place it with `buildDepot`.',
    });
    return;
  }
  stats.hashed++;
  const actual = hash.digest('hex');
  if (actual !== binary.checksum) {
    seen.set(binary.path, { state: 'wrong-content', actualSha256: actual });
    findings.push({
      id: 'binary.checksum-mismatch',
      severity: 'error',
      path: binary.path,
      message: `${binary.path} is served with the wrong content (SHA-256 ${actual}, the catalog says ${binary.checksum}).`,
      evidence: { actual, expected: binary.checksum },
      installer: `fails the ${binary.component} checksum check after the download`,
      fix: 'Download the file again; `buildDepot` checks it before placing it.',
    });
  }
}
