/**
 * What `serve --access-log FILE` opens: only a regular file at FILE itself,
 * never what a symbolic link there points at (whoever may write the log's
 * folder could aim it at a file the server may write), nor a FIFO or a
 * device; at start and when SIGHUP reopens it.
 */
import { execFileSync } from 'node:child_process';
import { readFile, rename, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { startDepotServer } from '../../src/server/index.js';
import { refusal } from '../helpers/output.js';
import { fetchRaw, spawnServe, useServeRuns } from './helpers.js';

const VICTIM_TEXT = 'not a log: nothing may be appended here\n';

const runs = useServeRuns('depotkit-access-log-files-');

const serveArgs = (log: string) => [runs.root, '--http', '--host', '127.0.0.1', '--port', '0', '--workers', '1', '--access-log', log];

/** The server serve --http starts, in this process, logging to `log`. */
const serveTo = (log: string) => startDepotServer({ root: runs.root, host: '127.0.0.1', port: 0, accessLog: { destination: log } });

function expectRefusal(r: { code: number; stderr: string }, message: RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr.split('\n').filter((l) => l.startsWith('depotkit:'))).toEqual([expect.stringMatching(message)]);
  expect(r.stderr).not.toMatch(/\n\s+at /);
}

describe('serve --access-log: the file it opens', () => {
  it('refuses a symbolic link at the path, to a file or to nothing yet: exit 2, one sentence, the target untouched', async () => {
    const victim = join(runs.dir, 'victim');
    await writeFile(victim, VICTIM_TEXT);
    const link = join(runs.dir, 'link.log');
    await symlink(victim, link);
    expectRefusal(await refusal(serveTo(link)), /^depotkit: The access log .*link\.log is a symbolic link; it is written only to a regular file\.$/);
    expect(await readFile(victim, 'utf8')).toBe(VICTIM_TEXT);

    const dangling = join(runs.dir, 'dangling.log');
    await symlink(join(runs.dir, 'would-be-created'), dangling);
    expectRefusal(await refusal(serveTo(dangling)), /is a symbolic link/);
    await expect(stat(join(runs.dir, 'would-be-created'))).rejects.toThrow(/ENOENT/);
  });

  it('refuses a FIFO (without blocking on it) and a device: exit 2, one sentence', async () => {
    const fifo = join(runs.dir, 'fifo.log');
    execFileSync('mkfifo', [fifo]);
    expectRefusal(await refusal(serveTo(fifo)), /^depotkit: The access log .*fifo\.log is not a regular file; it is written only to one\.$/);
    expectRefusal(await refusal(serveTo('/dev/null')), /^depotkit: The access log \/dev\/null is not a regular file/);
  });

  it('creates a missing file with mode 0640 (less what the umask takes)', async () => {
    const log = join(runs.dir, 'new.log');
    const server = await serveTo(log);
    try {
      expect((await fetchRaw(server.url, `/${DEPOT_PATHS.catalog}`)).status).toBe(200);
      expect((await stat(log)).mode & 0o777).toBe(0o640 & ~process.umask());
    } finally {
      await server.close();
    }
  });

  it('on SIGHUP, a symbolic link put at the path after logrotate moved the file is refused: the server keeps the previous file', async () => {
    const log = join(runs.dir, 'rotated.log');
    const victim = join(runs.dir, 'victim-hup');
    await writeFile(victim, VICTIM_TEXT);
    const serve = await spawnServe(serveArgs(log));
    runs.children.push(serve);
    expect((await fetchRaw(serve.url, `/${DEPOT_PATHS.catalog}?before`)).status).toBe(200);
    await rename(log, `${log}.1`);
    await symlink(victim, log);
    serve.child.kill('SIGHUP');
    await serve.waitForStderr(/the access log could not be reopened/);
    expect(serve.stderr()).toMatch(
      /warning: the access log could not be reopened, still writing to the previous file: The access log .*rotated\.log is a symbolic link/,
    );
    expect((await fetchRaw(serve.url, `/${DEPOT_PATHS.catalog}?after`)).status).toBe(200);
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    expect(await readFile(victim, 'utf8')).toBe(VICTIM_TEXT);
    // Both requests went to the file it had open.
    expect((await readFile(`${log}.1`, 'utf8')).trim().split('\n')).toHaveLength(2);
  });
});
