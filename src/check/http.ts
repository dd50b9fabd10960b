import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { NetAgent, type TlsRules, requestStream } from '../net/index.js';
import { NETWORK_LIMITS } from '../util/limits.js';
import { formatBytes } from '../util/text.js';
import type { DepotUrl } from '../util/depot-url.js';
import { RequestTiming } from './pool.js';

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body?: Buffer;
}

export interface DepotClient {
  /** For requests without credentials: goes on whatever the certificate. */
  agent: NetAgent;
  /** For requests with credentials; absent when they may not be sent. */
  credentialAgent?: NetAgent;
  https: boolean;
  /** How long its requests took, to judge what another connection is worth. */
  timing: RequestTiming;
  /**
   * Lets each agent open up to `count` connections (never more than the check's concurrency, never fewer than
   * before): an agent starts with one, and a request beyond its connections waits for one of them to be free.
   */
  allowConnections(count: number): void;
  close(): void;
}

/**
 * Where credentials may go: over HTTPS, only to the certificate the check has judged (the CAs it was judged
 * against, and its SHA-256 fingerprint, as `sha256Fingerprint` spells it); over HTTP, only when the user said so.
 */
export type CredentialTrust = { caPems: string[]; leafSha256: string } | 'plain-http';

/**
 * The check's HTTP client, on the network layer's kept-alive connections. Certificate trust
 * is judged separately (the snapshot and the lint); requests without
 * credentials go on regardless, so one run reports everything that is wrong,
 * not only the first thing. Requests with credentials use a second agent that
 * exists only with `trust`: over HTTPS it verifies every connection against
 * the given CAs and accepts only the very certificate that was judged (a
 * server that shows a trusted certificate to the check's first handshake and
 * another to the next gets nothing); the handshake fails before a byte of the
 * request is written. Its later connections resume the TLS session of its own
 * first one (Node's agent keeps it), which is the judged certificate's.
 *
 * Each agent starts with one connection and gets more through
 * `allowConnections` (see `connectionsWorth`): a connection costs a TCP and TLS
 * handshake and a socket in this process, dearer on a near server than several
 * requests in a row on a kept-alive one.
 */
export function depotClient(depot: DepotUrl, serverName: string, connections: number, trust?: CredentialTrust): DepotClient {
  const tls = (rules: Omit<TlsRules, 'serverName' | 'sessions'>) =>
    depot.https ? { tls: { ...rules, ...(depot.isIp ? {} : { serverName }), sessions: new Map() } } : {};
  const agent = new NetAgent({ timeoutMs: REQUEST_TIMEOUT_MS, ...tls({ rejectUnauthorized: false }) }, 1);
  let credentialAgent: NetAgent | undefined;
  if (depot.https && trust !== undefined && trust !== 'plain-http') {
    const pinned = trust.leafSha256;
    const rules = {
      // A certificate given as CA may be the depot's own (a leaf), which the installer's Java trust manager accepts.
      trust: { caPems: trust.caPems, partialChain: true },
      rejectUnauthorized: true,
      // The host name was judged with the certificate (--as-host included); what is left is that it is the same one.
      checkServerIdentity: (_host: string, cert: { fingerprint256: string }) =>
        cert.fingerprint256 === pinned
          ? undefined
          : new Error(`the server presented another certificate than the one checked (SHA-256 ${cert.fingerprint256}); the credentials were not sent`),
    };
    credentialAgent = new NetAgent({ timeoutMs: REQUEST_TIMEOUT_MS, ...tls(rules) }, 1);
  } else if (!depot.https && trust === 'plain-http') {
    credentialAgent = agent;
  }
  return {
    agent,
    credentialAgent,
    https: depot.https,
    timing: new RequestTiming(),
    allowConnections: (count) => {
      for (const a of new Set([agent, credentialAgent])) a?.allow(Math.min(connections, count));
    },
    close: () => {
      agent.destroy();
      credentialAgent?.destroy();
    },
  };
}

const REQUEST_TIMEOUT_MS = 60_000;

async function send(
  client: DepotClient,
  url: string,
  method: 'HEAD' | 'GET',
  authorization?: string,
  extra: Record<string, string> = {},
): Promise<IncomingMessage> {
  const agent = authorization === undefined ? client.agent : client.credentialAgent;
  if (!agent) throw new Error('credentials are sent only to a server that passed the TLS checks (or over HTTP when allowed)');
  const sent = performance.now();
  const answer = await requestStream(new URL(url), {
    method,
    agent,
    headers: { ...extra, ...(authorization ? { authorization } : {}) },
    idleMs: REQUEST_TIMEOUT_MS,
  });
  client.timing.record(performance.now() - sent);
  return answer.body;
}

/**
 * Reads and drops a body that is not wanted, up to NETWORK_LIMITS.discardBytes (so that a short one leaves
 * the connection for the next request); a longer one is cut with its connection.
 */
async function discard(res: IncomingMessage): Promise<void> {
  let size = 0;
  try {
    for await (const chunk of res) {
      size += (chunk as Buffer).length;
      // Leaving the loop destroys the answer.
      if (size > NETWORK_LIMITS.discardBytes) return;
    }
  } catch {
    // A body cut short is of no matter when it is not wanted.
  }
}

/** A GET's body whole, or only status and headers (a HEAD, or another status than 200); a body longer than `maxBody` fails. */
export async function fetchFile(
  client: DepotClient,
  url: string,
  method: 'HEAD' | 'GET',
  authorization?: string,
  maxBody: number = NETWORK_LIMITS.depotMetadataBytes,
  extra: Record<string, string> = {},
): Promise<HttpAnswer> {
  const res = await send(client, url, method, authorization, extra);
  const status = res.statusCode ?? 0;
  if (method === 'HEAD' || status !== 200) {
    await discard(res);
    return { status, headers: res.headers };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res) {
    size += (chunk as Buffer).length;
    if (size > maxBody) {
      res.destroy();
      throw new Error(`the answer is longer than ${formatBytes(maxBody)}, more than the file can be; the rest was not read`);
    }
    chunks.push(chunk as Buffer);
  }
  return { status, headers: res.headers, body: Buffer.concat(chunks) };
}

/** Status and headers of a request whose body is read and dropped (an anonymous probe needs no content). */
export async function probeStatus(client: DepotClient, url: string, method: 'HEAD' | 'GET', authorization?: string): Promise<HttpAnswer> {
  const res = await send(client, url, method, authorization);
  await discard(res);
  return { status: res.statusCode ?? 0, headers: res.headers };
}

/**
 * Streams a GET body through `onChunk`, for hashing binaries without holding them, and stops after
 * `maxBytes` + 1 bytes: a body longer than the file should be is cut there (`bytes` then says so).
 */
export async function streamFile(
  client: DepotClient,
  url: string,
  authorization: string | undefined,
  maxBytes: number,
  onChunk: (chunk: Buffer) => void,
): Promise<{ status: number; bytes: number }> {
  const res = await send(client, url, 'GET', authorization);
  const status = res.statusCode ?? 0;
  if (status !== 200) {
    await discard(res);
    return { status, bytes: 0 };
  }
  let bytes = 0;
  for await (const chunk of res) {
    const room = maxBytes + 1 - bytes;
    const part = (chunk as Buffer).length > room ? (chunk as Buffer).subarray(0, room) : (chunk as Buffer);
    bytes += part.length;
    onChunk(part);
    // One byte past the size is proof enough; leaving the loop destroys the answer.
    if (bytes > maxBytes) break;
  }
  return { status, bytes };
}

export function contentLength(answer: HttpAnswer): number | undefined {
  const text = answer.headers['content-length'];
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;
}
