import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { tempDir } from '../helpers/temp.js';
import { until } from '../helpers/poll.js';
import { certificatesAcross, childPids, makePki, spawnServe, tlsServeArgs, writeTree, type ServeChild } from './helpers.js';

/**
 * A reload that meets a worker's replacement: every serving process must serve the new certificate once the
 * reload is said to be done, whichever came first, the SIGHUP or the worker's death.
 */
describe('serve: a reload while a worker is replaced', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let root: string;
  const children: ServeChild[] = [];

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir());
    root = await writeTree(join(dir, 'web'), { [DEPOT_PATHS.catalog]: '{"patches": {}}\n' });
  });
  afterAll(async () => {
    for (const c of children) c.child.kill('SIGKILL');
    await cleanup?.();
  });

  /** A certificate from a CA named `cn`, renamed over the served pair as a rotation does. */
  async function rotateTo(cn: string): Promise<void> {
    const pki = await makePki(cn);
    await writeFile(join(dir, 'next-cert.pem'), pki.certPem);
    await writeFile(join(dir, 'next-key.pem'), pki.keyPem, { mode: 0o600 });
    await rename(join(dir, 'next-key.pem'), join(dir, 'key.pem'));
    await rename(join(dir, 'next-cert.pem'), join(dir, 'cert.pem'));
  }

  async function startServe(): Promise<{ serve: ServeChild; primary: number; worker: number }> {
    await rotateTo('first CA');
    const serve = await spawnServe([...tlsServeArgs(root, dir), '--workers', '2']);
    children.push(serve);
    const primary = serve.child.pid!;
    const [worker] = await until(
      () => childPids(primary),
      (pids) => pids.length === 1,
      'the worker',
    );
    return { serve, primary, worker: worker! };
  }

  /** The issuers of the certificates new connections get, once every serving process has taken some. */
  async function servedIssuers(serve: ServeChild, primary: number, replaced: number): Promise<string[]> {
    const [replacement] = await until(
      () => childPids(primary),
      (pids) => pids.length === 1 && pids[0] !== replaced,
      'the replacement worker',
    );
    const { issuers, seen } = await certificatesAcross(serve.port, [primary, replacement!]);
    expect(seen.size, 'both processes took connections').toBe(2);
    return [...new Set(issuers.map((issuer) => /CN=(.*)/.exec(issuer)?.[1] ?? issuer))];
  }

  const reloads = (serve: ServeChild) => (serve.stderr().match(/Reloaded the certificate|reload failed/g) ?? []).length;

  it('a SIGHUP just after a dead worker was replaced: the replacement serves the new certificate too', async () => {
    const { serve, primary, worker } = await startServe();
    await rotateTo('second CA');
    process.kill(worker, 'SIGKILL');
    await until(
      () => childPids(primary),
      (pids) => pids.some((p) => p !== worker),
      'the replacement forked',
      { everyMs: 2 },
    );
    process.kill(primary, 'SIGHUP');
    await until(() => reloads(serve) === 1, 'the reload said');
    expect(serve.stderr()).not.toMatch(/reload failed/);
    expect(await servedIssuers(serve, primary, worker)).toEqual(['second CA']);
  });

  it('a worker killed just after a SIGHUP: the reload succeeds and the replacement serves the new certificate', async () => {
    const { serve, primary, worker } = await startServe();
    await rotateTo('third CA');
    process.kill(primary, 'SIGHUP');
    process.kill(worker, 'SIGKILL');
    await until(() => reloads(serve) === 1, 'the reload said');
    expect(serve.stderr()).not.toMatch(/reload failed/);
    expect(await servedIssuers(serve, primary, worker)).toEqual(['third CA']);
  });
});
