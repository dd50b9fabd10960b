import { randomBytes } from 'node:crypto';
import { readFile, rename } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { startDepotServer, type DepotServer } from '../../src/server/index.js';
import { runCli } from '../helpers/cli.js';
import { useTempDir } from '../helpers/temp.js';
import { childPids, openAnswered, pidsServing, spawnServe, writeTree, type ServeChild } from './helpers.js';
import { until } from '../helpers/poll.js';

const BIG = randomBytes(16 * 1024 * 1024);
const BIG_PATH = 'PROD/COMP/VCENTER/VMware-VCSA-all-9.0.0.0.1.iso';

describe('serve: access log', () => {
  const tmp = useTempDir();
  let root: string;
  const servers: DepotServer[] = [];
  const children: ServeChild[] = [];

  beforeAll(async () => {
    root = await writeTree(join(tmp.dir, 'web'), { [BIG_PATH]: BIG, [DEPOT_PATHS.catalog]: '{"patches": {}}\n' });
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
    for (const c of children) c.child.kill('SIGKILL');
  });

  it('logs the client address of a download the client aborted', async () => {
    const log = join(tmp.dir, 'aborted.log');
    const s = await startDepotServer({ root, host: '127.0.0.1', port: 0, accessLog: { destination: log, format: 'json' } });
    servers.push(s);
    await new Promise<void>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: s.port, path: `/${BIG_PATH}`, agent: false }, (res) => {
        // The first bytes, then the client goes away.
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', reject);
      req.end();
    });
    await until(async () => (await readFile(log, 'utf8').catch(() => '')).includes(BIG_PATH), 'the log line');
    const record = JSON.parse((await readFile(log, 'utf8')).trim()) as { remote: string; status: number; bytes: number };
    expect(record.remote).toBe('127.0.0.1');
    expect(record.status).toBe(200);
    expect(record.bytes).toBeLessThan(BIG.length);
  });

  it('reopens the log file on SIGHUP in every serving process (logrotate without copytruncate)', async () => {
    const log = join(tmp.dir, 'access.log');
    const serve = await spawnServe([root, '--host', '127.0.0.1', '--port', '0', '--http', '--workers', '2', '--access-log', log]);
    children.push(serve);
    const pids = [serve.child.pid!, ...(await childPids(serve.child.pid!))];
    expect(pids).toHaveLength(2);
    /** Rounds of 16 requests held open at once, each to `path?round-i`, until both processes have answered some. */
    async function requestsAcross(path: string): Promise<string[]> {
      const sent: string[] = [];
      const seen = new Set<number>();
      for (let round = 0; round < 30 && seen.size < 2; round++) {
        const sockets = await openAnswered(serve.port, `${path}?r${round}`, 16);
        for (const pid of await pidsServing(pids, serve.port)) seen.add(pid);
        for (const s of sockets) s.destroy();
        sent.push(`${path}?r${round}`);
      }
      expect(seen.size).toBe(2);
      return sent;
    }
    await requestsAcross('/before-rotation');
    await until(async () => (await readFile(log, 'utf8')).split('\n').length > 16, 'the first lines');
    // logrotate's default: rename, then SIGHUP; the server writes to a new file at the old path.
    await rename(log, `${log}.1`);
    serve.child.kill('SIGHUP');
    await serve.waitForStderr(/Reopened the access log/);
    const after = (await requestsAcross('/after-rotation')).length * 16;
    await until(
      async () => (await readFile(log, 'utf8').catch(() => '')).split('\n').filter((l) => l.includes('/after-rotation')).length >= after,
      'lines in the new file',
    );
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    const rotated = await readFile(`${log}.1`, 'utf8');
    const fresh = await readFile(log, 'utf8');
    expect(rotated).toContain('/before-rotation');
    expect(rotated).not.toContain('/after-rotation');
    expect(fresh).not.toContain('/before-rotation');
    // Every request after the rotation is in the new file, from both processes.
    expect(fresh.split('\n').filter((l) => l.includes('/after-rotation'))).toHaveLength(after);
  });

  it('refuses an access log it cannot open with one sentence, exit 2', async () => {
    const r = await runCli(['serve', root, '--http', '--port', '0', '--access-log', join(tmp.dir, 'missing-folder', 'access.log')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/missing-folder\/access\.log.*does not exist/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
