import { Agent, request, type Dispatcher } from 'undici';
import type { DepotUrl } from './url.js';

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body?: Buffer;
}

/**
 * The check's HTTP client. Certificate trust is judged separately (the
 * snapshot and the lint); requests go on regardless, so one run reports
 * everything that is wrong, not only the first thing.
 */
export function depotAgent(depot: DepotUrl, serverName: string, connections: number): Agent {
  return new Agent({
    connections,
    connect: depot.https ? { rejectUnauthorized: false, servername: depot.isIp ? undefined : serverName } : undefined,
    headersTimeout: 30_000,
    bodyTimeout: 60_000,
  });
}

export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

export async function fetchFile(
  dispatcher: Dispatcher,
  url: string,
  method: 'HEAD' | 'GET',
  authorization?: string,
  maxBody = 256 << 20,
): Promise<HttpAnswer> {
  const res = await request(url, { method, dispatcher, headers: authorization ? { authorization } : {} });
  if (method === 'HEAD' || res.statusCode !== 200) {
    await res.body.dump();
    return { status: res.statusCode, headers: res.headers };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length;
    if (size > maxBody) {
      res.body.destroy();
      throw new Error(`${url} is larger than ${maxBody} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) };
}

/** Streams a GET body through `onChunk`, for hashing binaries without holding them. */
export async function streamFile(dispatcher: Dispatcher, url: string, authorization: string | undefined, onChunk: (chunk: Buffer) => void): Promise<number> {
  const res = await request(url, { method: 'GET', dispatcher, headers: authorization ? { authorization } : {} });
  if (res.statusCode !== 200) {
    await res.body.dump();
    return res.statusCode;
  }
  for await (const chunk of res.body) onChunk(chunk as Buffer);
  return res.statusCode;
}

export function contentLength(answer: HttpAnswer): number | undefined {
  const value = answer.headers['content-length'];
  const text = Array.isArray(value) ? value[0] : value;
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;
}
