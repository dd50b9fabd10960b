import type { EsxReader } from '../../esx/chain.js';
import { DepotkitError, EXIT } from '../../util/errors.js';
import { type Connection, authFailure, boundedBody, discard, get, watchProgress } from '../mirror/connection.js';

/**
 * The depot's documents over HTTP, as readEsxChain reads them: each within the bound it asks
 * for, 404 as absent; every body read is kept, to be written into the mirror at the end. Errors
 * name the path in the depot, never the URL (whose path may hold the token).
 */
export class RemoteReader implements EsxReader {
  /** What was read, by depot-relative path. */
  readonly fetched = new Map<string, Buffer>();

  constructor(private readonly conn: Connection) {}

  async read(path: string, maxBytes: number): Promise<Buffer | undefined> {
    const watch = watchProgress(this.conn);
    try {
      const res = await get(this.conn, path, {}, watch);
      if (res.statusCode !== 200) {
        await discard(res);
        if (res.statusCode === 404) return undefined;
        if (res.statusCode === 401 || res.statusCode === 403) throw authFailure(this.conn, res.statusCode);
        throw new Error(`the server answered ${res.statusCode}`);
      }
      const chunks: Buffer[] = [];
      for await (const chunk of boundedBody(res, maxBytes, watch)) chunks.push(chunk);
      const bytes = Buffer.concat(chunks);
      this.fetched.set(path, bytes);
      return bytes;
    } finally {
      watch.stop();
    }
  }
}

/** The root index, first: it proves the server is reachable, trusted and an ESX depot before anything is written. */
export async function readRootIndex(reader: RemoteReader, index: string, shown: string, maxBytes: number): Promise<void> {
  let bytes: Buffer | undefined;
  try {
    bytes = await reader.read(index, maxBytes);
  } catch (err) {
    if (err instanceof DepotkitError) throw err;
    throw new DepotkitError(`${shown} could not be read: ${(err as Error).message}.`, EXIT.problems, 'Run the same command again; nothing was written.');
  }
  if (!bytes)
    throw new DepotkitError(
      `${shown} answered 404: no ESX depot index is there.`,
      EXIT.problems,
      "Give the URL of the depot's root index (index.xml or vmw-depot-index.xml).",
    );
}
