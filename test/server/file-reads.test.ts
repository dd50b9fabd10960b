import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVE_METRIC_NAMES } from '../../src/constants.js';
import { startDepotServer, type DepotServer, type FileReadPolicy } from '../../src/server/index.js';
import { diskTempDir, onTmpfs } from '../helpers/temp.js';
import { fetchRaw, makePki, writeTree, type TestPki } from './helpers.js';

const run = promisify(execFile);
// Not a multiple of the buffer: the last read is a short one.
const BODY = randomBytes(3 * 1024 * 1024 + 12_345);
const PATH = '/PROD/COMP/VCENTER/VMware-VCSA-all-9.0.0.0.1.iso';
const BUFFER = 256 * 1024;
const READS = Math.ceil(BODY.length / BUFFER);
// A tmpfs holds its files in the page cache itself: nothing there can be dropped to make a read wait for a disk.
// The files are on the machine's own temporary folder, not in the suite's memory one.
let inPageCache = false;

/** Reads in the event loop this server counted as slow (its metric). */
function slowReads(server: DepotServer): number {
  return server.metricsSnapshot().find((m) => m.name === SERVE_METRIC_NAMES.slowFileReads)?.values[0]?.value ?? -1;
}

describe('file reads: in the event loop while fast, through the thread pool after slow ones', () => {
  let pki: TestPki;
  let root: string;
  let cleanup: () => Promise<void>;
  const servers: DepotServer[] = [];

  const serve = async (fileReads: FileReadPolicy) => {
    const server = await startDepotServer({
      root,
      host: '127.0.0.1',
      port: 0,
      tls: { certPem: pki.certPem, keyPem: pki.keyPem },
      readBuffer: BUFFER,
      fileReads,
    });
    servers.push(server);
    return server;
  };
  const get = (server: DepotServer, headers: Record<string, string> = {}, method = 'GET') => fetchRaw(server.url, PATH, { method, headers, ca: pki.caCertPem });

  /** GET, a Range and HEAD of the file answer exactly what they answered before reads could leave the loop. */
  async function expectExactAnswers(server: DepotServer): Promise<void> {
    const whole = await get(server);
    expect(whole.status).toBe(200);
    expect(whole.body.equals(BODY)).toBe(true);
    const part = await get(server, { Range: 'bytes=1000-2000999' });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 1000-2000999/${BODY.length}`);
    expect(part.body.equals(BODY.subarray(1000, 2_001_000))).toBe(true);
    const tail = await get(server, { Range: 'bytes=-70000' });
    expect(tail.body.equals(BODY.subarray(BODY.length - 70_000))).toBe(true);
    const head = await get(server, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-length']).toBe(String(BODY.length));
    expect(head.headers.etag).toBe(whole.headers.etag);
  }

  beforeAll(async () => {
    pki = await makePki();
    const t = await diskTempDir();
    inPageCache = onTmpfs(t.dir);
    cleanup = t.cleanup;
    root = await writeTree(join(t.dir, 'web'), { [PATH.slice(1)]: BODY });
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await cleanup?.();
  });

  it('reads every chunk in the loop while no read is slow', async () => {
    // A zero-length stay in the pool: each read counts as slow and the next one is in the loop again.
    const server = await serve({ loopBoundMs: 0, poolMs: 0 });
    const whole = await get(server);
    expect(whole.body.equals(BODY)).toBe(true);
    // Every chunk was read in the loop (and timed there).
    expect(slowReads(server)).toBe(READS);
    await expectExactAnswers(server);
  });

  it('sends the reads to the pool after two slow ones, the bytes unchanged', async () => {
    const server = await serve({ loopBoundMs: 0, poolMs: Number.POSITIVE_INFINITY });
    await expectExactAnswers(server);
    // Two reads in the loop, slow by the bound of 0; every later one, of every request, in the pool.
    expect(slowReads(server)).toBe(2);
  });

  it('counts a read that waited for the disk', async ({ skip }) => {
    if (inPageCache) skip("the machine's temporary folder is a tmpfs");
    const server = await serve({ loopBoundMs: 0.001, poolMs: Number.POSITIVE_INFINITY });
    // Written out and dropped from the page cache (dd's `nocache`: posix_fadvise DONTNEED on the file): the first
    // read has to wait for the disk, and the thread sleeps meanwhile.
    const file = await open(join(root, PATH), 'r');
    await file.datasync();
    await file.close();
    await run('dd', [`if=${join(root, PATH)}`, 'iflag=nocache', 'count=0', 'status=none']);
    const whole = await get(server);
    expect(whole.body.equals(BODY)).toBe(true);
    expect(slowReads(server)).toBeGreaterThanOrEqual(1);
  });
});
