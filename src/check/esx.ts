import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import { limiter } from '../util/limit.js';
import { readEsxChain } from '../esx/chain.js';
import type { EsxVib } from '../esx/model.js';
import type { EsxSource } from '../esx/source.js';
import { type EsxProductStatus, judgeProducts } from '../esx/status.js';
import { checkVibs } from '../esx/vibs.js';
import { depotFileUrl, parseDepotUrl } from '../util/depot-url.js';
import { usageError } from '../util/errors.js';
import { type Finding, hasErrors } from '../util/findings.js';
import type { ProgressHooks } from '../util/progress.js';
import { plural } from '../util/text.js';
import { resolveAndConnect } from './connect.js';
import { CHECK_DEFAULTS } from './defaults.js';
import { type DepotClient, type HttpAnswer, contentLength, depotClient, fetchFile, streamFile } from './http.js';
import { connectFinding } from './network.js';
import { type TlsSummary, tlsStage } from './tls.js';

export interface EsxCheckOptions extends Partial<ProgressHooks> {
  /** PEM text of the CA certificates the vCenter trusts (its trusted root chains). */
  caPems?: string[];
  /** The host name the vCenter will use, when it differs from the URL's. */
  asHost?: string;
  /** Download every VIB and compare its SHA-256 with its metadata's. */
  deep?: boolean;
  concurrency?: number;
  timeoutMs?: number;
  now?: Date;
}

export interface EsxCheckResult {
  url: string;
  /** Would vLCM take this depot? */
  accepted: boolean;
  findings: Finding[];
  tls?: TlsSummary;
  products: EsxProductStatus[];
  stats: { metadata: number; vibs: number; present: number; hashed: number };
}

/** The folder URL and the root index's name in it. */
function splitIndexUrl(text: string): { folder: string; index: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(`"${text}" is not a URL; give the depot as the URL of its root index (https://host[:port]/path/index.xml).`);
  }
  const index = posix.basename(url.pathname);
  if (!index.endsWith('.xml')) {
    throw usageError(`${text} does not name a root index: give the URL vSphere Lifecycle Manager is given, ending in index.xml or vmw-depot-index.xml.`);
  }
  url.pathname = posix.dirname(url.pathname);
  return { folder: url.href, index };
}

/** Answers other than 200 and 404, by path: what vLCM would be refused. */
type Refusals = Map<string, number>;

/** The depot over HTTP(S) as vLCM reads it: anonymous GETs and HEADs, relative to the index's folder. */
function httpSource(client: DepotClient, folder: ReturnType<typeof parseDepotUrl>['url'], refusals: Refusals, concurrency: number): EsxSource {
  const url = (path: string) => depotFileUrl(folder, path);
  const answered = (path: string, answer: HttpAnswer): boolean => {
    if (answer.status === 200) return true;
    if (answer.status !== 404 && answer.status !== 410) refusals.set(path, answer.status);
    return false;
  };
  const limit = limiter(concurrency);
  return {
    label: folder.base.href,
    kind: 'folder',
    read: async (path, maxBytes) => {
      const answer = await fetchFile(client, url(path), 'GET', undefined, maxBytes);
      if (answer.status === 401 || answer.status === 403)
        throw new Error(`the server answers ${answer.status} to a request without credentials, and vLCM sends none`);
      return answered(path, answer) ? answer.body : undefined;
    },
    size: (path) =>
      limit(async () => {
        const answer = await fetchFile(client, url(path), 'HEAD');
        // A 200 without Content-Length (chunked) says the VIB is there, not that it is of another size.
        return answered(path, answer) ? (contentLength(answer) ?? null) : undefined;
      }),
    sha256: async (paths, onBytes) => {
      const digests = await Promise.all(
        paths.map((path) =>
          limit(async () => {
            const hash = createHash('sha256');
            const got = await streamFile(client, url(path), undefined, Number.MAX_SAFE_INTEGER, (chunk) => {
              hash.update(chunk);
              onBytes?.(chunk.length);
            }).catch(() => undefined);
            return [path, got?.status === 200 ? hash.digest('hex') : undefined] as const;
          }),
        ),
      );
      return new Map(digests);
    },
    stream: () => Promise.reject(new Error('a depot over HTTP is not streamed by the check')),
    files: async () => [],
    close: () => client.close(),
  };
}

function refusalFindings(refusals: Refusals): Finding[] {
  if (refusals.size === 0) return [];
  const paths = [...refusals.keys()];
  const statuses = [...new Set(refusals.values())].sort();
  const auth = statuses.some((s) => s === 401 || s === 403);
  return [
    {
      id: auth ? 'esx.http.credentials' : 'esx.http.status',
      severity: 'error',
      message: `${plural(paths.length, 'file')} of the depot answered ${statuses.join(', ')} instead of 200: ${paths.slice(0, 3).join(', ')}${paths.length > 3 ? ` and ${paths.length - 3} more` : ''}.`,
      path: paths[0],
      evidence: { statuses: Object.fromEntries([...refusals.entries()].slice(0, 50)) },
      fix: auth
        ? 'vSphere Lifecycle Manager sends no credentials: serve the ESX depot without authentication (an open path of `serveDepot`).'
        : "Look at the web server's error log for these files.",
    },
  ];
}

/**
 * Checks an ESX depot over the network as vSphere Lifecycle Manager reads it: DNS and TCP, TLS
 * trusted only through the given CAs (the vCenter's trusted root chains) with the host name checked,
 * the root index, the vendor indexes and every metadata zip fetched without credentials, every VIB
 * asked for (HEAD, its Content-Length against the metadata), and with `deep` every VIB hashed.
 */
export async function checkEsxDepot(urlText: string, options: EsxCheckOptions = {}): Promise<EsxCheckResult> {
  const { folder, index } = splitIndexUrl(urlText);
  const { url: depot, findings } = parseDepotUrl(folder, options.asHost);
  const timeoutMs = options.timeoutMs ?? CHECK_DEFAULTS.timeoutMs;
  const hostName = options.asHost ?? depot.host;
  const result: EsxCheckResult = { url: urlText, accepted: false, findings, products: [], stats: { metadata: 0, vibs: 0, present: 0, hashed: 0 } };
  const finish = () => ({ ...result, accepted: !hasErrors(findings) });
  const connected = await resolveAndConnect(depot, timeoutMs);
  if (!connected.ok) {
    findings.push(connectFinding(depot, connected));
    return finish();
  }
  if (depot.https) {
    const target = { depot, address: connected.address, hostName, timeoutMs, connection: connected.socket };
    const stage = await tlsStage(target, { caPems: options.caPems, now: options.now }, findings, (tls) => (result.tls = tls));
    if (stage.stop) return finish();
  } else {
    connected.socket.destroy();
    findings.push({
      id: 'esx.http.plain',
      severity: 'warning',
      message: 'The depot is served over plain HTTP: vCenter warns that using HTTP is not secure.',
      fix: 'Serve it over HTTPS.',
    });
  }
  const concurrency = Math.max(1, options.concurrency ?? CHECK_DEFAULTS.concurrency);
  const client = depotClient(depot, hostName, concurrency);
  client.allowConnections(concurrency);
  const refusals: Refusals = new Map();
  const source = httpSource(client, depot, refusals, concurrency);
  try {
    const chain = await readEsxChain(source, index, findings);
    const vibs = new Map<string, EsxVib>();
    for (const zip of chain.metadata.values()) for (const vib of zip.vibs) vibs.set(vib.path, vib);
    const checked = await checkVibs(source, [...vibs.values()], findings, options);
    findings.push(...refusalFindings(refusals));
    result.products = judgeProducts(chain.products, chain.metadata, checked.present);
    result.stats = { metadata: chain.metadata.size, vibs: vibs.size, present: checked.present.size, hashed: checked.hashed };
  } finally {
    source.close();
  }
  return finish();
}
