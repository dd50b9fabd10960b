import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startDepotServer } from '../../src/server/index.js';
import { DepotkitError } from '../../src/util/errors.js';
import { runCli } from '../helpers/cli.js';
import { refusal } from '../helpers/output.js';
import { certificatesAcross, childPids, makePki, spawnServe, useServeRuns, type ServeChild, type TestPki } from './helpers.js';
import { until } from '../helpers/poll.js';

describe('serve: certificate and key files', () => {
  const runs = useServeRuns();
  let pkiA: TestPki;
  let pkiB: TestPki;
  const cert = () => join(runs.dir, 'cert.pem');
  const key = () => join(runs.dir, 'key.pem');

  beforeAll(async () => {
    [pkiA, pkiB] = await Promise.all([makePki('CA A'), makePki('CA B')]);
  });

  async function writePair(certPem: string, keyPem: string): Promise<void> {
    await writeFile(cert(), certPem);
    await writeFile(key(), keyPem, { mode: 0o600 });
  }

  async function serve(workers: number): Promise<ServeChild> {
    const s = await spawnServe([runs.root, '--host', '127.0.0.1', '--port', '0', '--cert', cert(), '--key', key(), '--workers', String(workers)]);
    runs.children.push(s);
    return s;
  }

  it('refuses an empty or PEM-less certificate or key at start: one sentence, exit 2', async () => {
    const cases: [string, string, RegExp][] = [
      ['', pkiA.keyPem, /cert\.pem holds no PEM certificate/],
      [' \n\n', pkiA.keyPem, /cert\.pem holds no PEM certificate/],
      [pkiA.certPem, '', /key\.pem holds no PEM private key/],
      [pkiA.certPem, pkiA.certPem, /key\.pem holds no PEM private key/],
      [pkiA.keyPem, pkiA.keyPem, /cert\.pem holds no PEM certificate/],
      [pkiA.certPem, pkiB.keyPem, /does not belong to the certificate file/],
    ];
    // The built CLI for the first, the library serve calls (the files read before listening) for every one.
    for (const [i, [certPem, keyPem, message]] of cases.entries()) {
      await writePair(certPem, keyPem);
      const r =
        i === 0
          ? await runCli(['serve', runs.root, '--host', '127.0.0.1', '--port', '0', '--cert', cert(), '--key', key(), '--workers', '1'])
          : await refusal(startDepotServer({ root: runs.root, host: '127.0.0.1', port: 0, tls: { certFile: cert(), keyFile: key() } }));
      expect(r.code, String(message)).toBe(2);
      expect(r.stderr, String(message)).toMatch(message);
      expect(r.stderr.split('\n').filter((l) => l.startsWith('depotkit:'))).toHaveLength(1);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    // The library refuses the same, before listening.
    await expect(startDepotServer({ root: runs.root, tls: { certPem: '', keyPem: '' } })).rejects.toThrow(DepotkitError);
    await expect(startDepotServer({ root: runs.root, tls: { certPem: pkiA.certPem, keyPem: '' } })).rejects.toThrow(/no PEM private key/);
  });

  it('on SIGHUP keeps the old pair in every serving process when the new certificate or key is empty, and warns', async () => {
    await writePair(pkiA.certPem, pkiA.keyPem);
    const serve2 = await serve(2);
    const pids = [serve2.child.pid!, ...(await childPids(serve2.child.pid!))];
    expect(pids).toHaveLength(2);
    let failures = 0;
    for (const [certPem, keyPem] of [
      ['', pkiB.keyPem],
      [pkiB.certPem, ''],
      ['', ''],
    ]) {
      await writePair(certPem!, keyPem!);
      serve2.child.kill('SIGHUP');
      failures++;
      await serve2.waitForStderr(new RegExp(`(reload failed[^]*){${failures}}`));
      const { issuers, seen } = await certificatesAcross(serve2.port, pids);
      expect(seen).toEqual(new Set(pids));
      expect(new Set(issuers)).toEqual(new Set(['CN=CA A']));
    }
    expect(serve2.stderr()).not.toMatch(/Reloaded/);
    // A good pair afterwards is taken.
    await writePair(pkiB.certPem, pkiB.keyPem);
    serve2.child.kill('SIGHUP');
    await serve2.waitForStderr(/Reloaded/);
    expect(new Set((await certificatesAcross(serve2.port, pids)).issuers)).toEqual(new Set(['CN=CA B']));
    serve2.child.kill('SIGTERM');
    expect(await serve2.exited).toBe(0);
  });

  it('a worker that replaces a dead one serves the certificate of the last SIGHUP, not the one from start-up', async () => {
    await writePair(pkiA.certPem, pkiA.keyPem);
    const serve2 = await serve(2);
    const primary = serve2.child.pid!;
    const [first] = await childPids(primary);
    await writePair(pkiB.certPem, pkiB.keyPem);
    serve2.child.kill('SIGHUP');
    await serve2.waitForStderr(/Reloaded/);
    process.kill(first!, 'SIGKILL');
    await serve2.waitForStderr(/starting another/);
    const replacement = await until(
      async () => (await childPids(primary)).filter((p) => p !== first),
      (pids) => pids.length > 0,
      'the replacement worker',
      { everyMs: 50 },
    );
    expect(replacement).toHaveLength(1);
    // Rounds until the replacement has taken connections: every handshake, its own included, gets the rotated certificate.
    const { issuers, seen } = await certificatesAcross(serve2.port, [primary, ...replacement]);
    expect(seen).toEqual(new Set([primary, ...replacement]));
    expect(new Set(issuers)).toEqual(new Set(['CN=CA B']));
    serve2.child.kill('SIGTERM');
    expect(await serve2.exited).toBe(0);
  });
});
