import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readlinkSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDepotServer, type DepotServer } from '../../src/server/index.js';
import { useTempDir } from '../helpers/temp.js';
import { basic, fetchRaw, makePki, writeTree, type TestPki } from './helpers.js';
import { until } from '../helpers/poll.js';

const run = promisify(execFile);
const BIG = randomBytes(24 * 1024 * 1024);
const PATH = '/PROD/COMP/VROPS/Operations-Appliance-9.0.0.0.1.ova';

/** How many descriptors of this process have `file` open. */
function descriptorsOf(file: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === file) n++;
    } catch {
      // Closed between the listing and the look.
    }
  }
  return n;
}

describe('downloads', () => {
  let pki: TestPki;
  let server: DepotServer;
  const tmp = useTempDir();
  let served: string;

  beforeAll(async () => {
    pki = await makePki();
    const root = await writeTree(join(tmp.dir, 'web'), { [PATH.slice(1)]: BIG });
    served = join(root, PATH);
    server = await startDepotServer({
      root,
      host: '127.0.0.1',
      port: 0,
      tls: { certPem: pki.certPem, keyPem: pki.keyPem },
      auth: { user: 'u', password: 'p' },
    });
    await writeFile(join(tmp.dir, 'ca.pem'), pki.caCertPem);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('resumes an interrupted download with curl -C - and ends byte-identical', async () => {
    const out = join(tmp.dir, 'resumed.ova');
    // The first part as an interrupted transfer leaves it, then curl continues from its size.
    await writeFile(out, BIG.subarray(0, 7_654_321));
    const url = `https://localhost:${server.port}${PATH}`;
    await run('curl', ['-sS', '--fail', '--cacert', join(tmp.dir, 'ca.pem'), '-u', 'u:p', '-C', '-', '-o', out, url]);
    expect((await readFile(out)).equals(BIG)).toBe(true);
    // And a truncated file resumed again after a real cut-off (curl's own size limit stops it mid-way).
    const cut = join(tmp.dir, 'cut.ova');
    await run('curl', ['-sS', '--cacert', join(tmp.dir, 'ca.pem'), '-u', 'u:p', '-r', '0-999999', '-o', cut, url]);
    await run('curl', ['-sS', '--fail', '--cacert', join(tmp.dir, 'ca.pem'), '-u', 'u:p', '-C', '-', '-o', cut, url]);
    expect((await readFile(cut)).equals(BIG)).toBe(true);
  });

  it('releases the file descriptor of a client that aborts, and keeps serving the others', async () => {
    await until(() => descriptorsOf(served) === 0, 'earlier downloads to close the file');
    // A slow client in another process: the server is stuck mid-file, its descriptor open, when the client dies.
    const slow = spawn('curl', [
      '-sS',
      '--cacert',
      join(tmp.dir, 'ca.pem'),
      '-u',
      'u:p',
      '--limit-rate',
      '200k',
      '-o',
      '/dev/null',
      `https://localhost:${server.port}${PATH}`,
    ]);
    const slowExit = new Promise((resolve) => slow.on('close', resolve));
    await until(() => descriptorsOf(served) > 0, 'the server to open the file');
    const other = fetchRaw(server.url, PATH, { ca: pki.caCertPem, headers: { Authorization: basic('u', 'p') } });
    slow.kill('SIGKILL');
    await slowExit;
    const full = await other;
    expect(full.body.equals(BIG)).toBe(true);
    // None is left once the aborted and the finished download are over.
    await until(() => descriptorsOf(served) === 0, `the served file's descriptors to close (${descriptorsOf(served)} open)`);
    expect(descriptorsOf(served)).toBe(0);
  });
});
