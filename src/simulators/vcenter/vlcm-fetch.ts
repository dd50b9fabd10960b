import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { VLCM_HOSTNAME_MISMATCH_WORDS } from '../../constants.js';
import { certificateCoversHost, encodePem } from '../../cert/index.js';
import { readEsxChain, type EsxChain, type EsxReader } from '../../esx/chain.js';
import { bundleSource } from '../../esx/source.js';
import { errorMessage } from '../../util/errors.js';
import type { Finding } from '../../util/findings.js';
import { NetAgent, networkErrorCode, requestStream } from '../../net/index.js';
import { bareHost } from '../../util/url.js';
import { TLS_TRUST_ERROR_CODES } from '../../util/tls-errors.js';
import { VLCM_SIM_FETCH } from './literals.js';

/** One component and version as a depot's metadata lists it. */
export interface DepotComponent {
  name: string;
  version: string;
  vendor: string;
  bulletin: string;
}

/** A depot's sync: what its metadata lists, or why vLCM could not read it. */
export type DepotFetch = { ok: true; components: DepotComponent[] } | { ok: false; cause: string };

/** A certificate naming the host in its SAN, as vLCM's client (Python's ssl) checks it; the CN is never read. */
function strictName(host: string, peer: { raw: Buffer }): Error | undefined {
  return certificateCoversHost(encodePem('CERTIFICATE', peer.raw), host) ? undefined : new Error(VLCM_SIM_FETCH.hostnameMismatch(host));
}

/** A failure as vLCM's client words it: a refused certificate in Python's ssl words, else the socket's. */
function describe(err: unknown): string {
  const code = networkErrorCode(err);
  const text = errorMessage(err);
  if ((code && TLS_TRUST_ERROR_CODES.has(code)) || text.startsWith(VLCM_HOSTNAME_MISMATCH_WORDS)) return `${VLCM_SIM_FETCH.sslPrefix}${text}`;
  return code && !text.includes(code) ? `${code} ${text}` : text;
}

/**
 * A GET without credentials (vLCM sends none), trusting only `trusted` over TLS: the answer, or undefined for 404
 * and 410. One connection per request, closed with its answer, as vLCM's client opens one per file here.
 */
async function get(url: URL, trusted: readonly string[]): Promise<IncomingMessage | undefined> {
  const host = bareHost(url.hostname);
  const tls = { trust: { caPems: [...trusted] }, rejectUnauthorized: true, checkServerIdentity: strictName, ...(isIP(host) ? {} : { serverName: host }) };
  const agent = new NetAgent({ timeoutMs: VLCM_SIM_FETCH.timeoutMs, ...(url.protocol === 'https:' ? { tls } : {}) }, 1);
  // Connection: close: the socket ends with the answer, and the agent holds nothing after it.
  const answer = await requestStream(url, { method: 'GET', agent, headers: { connection: 'close' }, idleMs: VLCM_SIM_FETCH.timeoutMs });
  const res = answer.body;
  if (answer.statusCode === 200) return res;
  res.resume();
  if (answer.statusCode === 404 || answer.statusCode === 410) return undefined;
  throw new Error(`HTTP Error ${answer.statusCode}: ${res.statusMessage ?? ''}`.trim());
}

async function getBytes(url: URL, trusted: readonly string[], maxBytes: number): Promise<Buffer | undefined> {
  const res = await get(url, trusted);
  if (!res) return undefined;
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      res.destroy();
      throw new Error(`${url.href} is larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The components of a chain, each with the vendor whose index lists its metadata. */
function componentsOf(chain: EsxChain): DepotComponent[] {
  const found: DepotComponent[] = [];
  for (const product of chain.products) {
    for (const c of chain.metadata.get(product.metadata)?.components ?? []) {
      if (c.name && c.version && !found.some((f) => f.name === c.name && f.version === c.version))
        found.push({ name: c.name, version: c.version, vendor: product.vendor, bulletin: c.bulletin });
    }
  }
  return found;
}

/** Reads a chain; the first network failure, else the first broken link, is why the depot cannot be used. */
async function readChain(reader: EsxReader, index: string, failure: () => string | undefined): Promise<DepotFetch> {
  const findings: Finding[] = [];
  const chain = await readEsxChain(reader, index, findings);
  const broken = findings.find((f) => f.severity === 'error');
  const cause = failure() ?? broken?.message;
  return cause === undefined ? { ok: true, components: componentsOf(chain) } : { ok: false, cause };
}

/**
 * Syncs an online depot as vLCM does: the root index at `location`, its vendor indexes, then each
 * metadata zip, each fetched over TLS trusted only through `trusted` (vCenter's trusted root
 * chains) with the host name checked. VIBs are not fetched: vLCM takes them when a host is remediated.
 */
export async function fetchOnlineDepot(location: string, trusted: readonly string[]): Promise<DepotFetch> {
  const url = new URL(location);
  const folder = new URL('.', url);
  let failure: string | undefined;
  const reader: EsxReader = {
    read: async (path, maxBytes) => {
      const at = new URL(path, folder);
      try {
        return await getBytes(at, trusted, maxBytes);
      } catch (err) {
        failure ??= `Cannot download ${at.href}: ${describe(err)}`;
        throw err;
      }
    },
  };
  return readChain(reader, posix.basename(url.pathname), () => failure);
}

/** Pulls an offline bundle (`*-depot.zip`) from `location` as an offline depot's create does, and reads its chain. */
export async function fetchOfflineBundle(location: string, trusted: readonly string[]): Promise<DepotFetch> {
  const url = new URL(location);
  const dir = await mkdtemp(join(tmpdir(), 'depotkit-vlcm-'));
  const file = join(dir, 'bundle.zip');
  try {
    try {
      const res = await get(url, trusted);
      if (!res) return { ok: false, cause: `Cannot download ${url.href}: HTTP Error 404` };
      let total = 0;
      res.on('data', (chunk: Buffer) => {
        total += chunk.length;
        if (total > VLCM_SIM_FETCH.maxBundleBytes) res.destroy(new Error(`the bundle is larger than ${VLCM_SIM_FETCH.maxBundleBytes} bytes`));
      });
      await pipeline(res, createWriteStream(file));
    } catch (err) {
      return { ok: false, cause: `Cannot download ${url.href}: ${describe(err)}` };
    }
    let source;
    try {
      source = await bundleSource(file);
    } catch (err) {
      return { ok: false, cause: `${url.href} is not an offline bundle: ${errorMessage(err)}` };
    }
    try {
      return await readChain(source, 'index.xml', () => undefined);
    } finally {
      source.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
