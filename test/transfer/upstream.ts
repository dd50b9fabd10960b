import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * A real HTTPS server on 127.0.0.1 that answers as the test tells it: an
 * upstream depot that may be hostile (answers without end, drips, lies about
 * names). `respond` returns false to let the request fall through to the
 * files under `root` (200 or 404, no ranges).
 */
export interface Upstream {
  /** https://localhost:<port>, a name the test certificates hold. */
  url: string;
  port: number;
  /** Paths asked for, in order (without the leading slash). */
  requests: string[];
  close(): Promise<void>;
}

export type Respond = (path: string, req: IncomingMessage, res: ServerResponse) => boolean | void;

export async function startUpstream(tls: { certPem: string; keyPem: string }, respond: Respond, root?: string, port = 0): Promise<Upstream> {
  const requests: string[] = [];
  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    const path = decodeURIComponent(new URL(req.url!, 'https://x').pathname).slice(1);
    requests.push(path);
    res.on('error', () => undefined);
    if (respond(path, req, res) !== false) return;
    if (!root) return void res.writeHead(404).end();
    void sendFile(join(root, path), res);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `https://localhost:${bound}`,
    port: bound,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A file of the served folder, whole, or 404. */
export async function sendFile(file: string, res: ServerResponse): Promise<void> {
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-length': info.size });
  createReadStream(file).pipe(res);
}

/** Sends `chunk` again and again until the client goes away: a body without end. */
export function sendForever(res: ServerResponse, chunk: Buffer = Buffer.alloc(64 * 1024, 0x20)): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const pump = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', pump);
  };
  pump();
}
