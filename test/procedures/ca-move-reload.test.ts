import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { moveDepotCa, servedLeafSha256, type CaMoveOptions } from '../../src/procedures/index.js';
import { depotSpec, useMoveFixture, type MoveFixture } from './ca-move-fixture.js';

/**
 * A site reloaded by hand, the move run again at once: nginx's and Apache's reload commands return
 * before the server takes the new pair, so the re-run can find the old certificate still served.
 */
describe('a CA move run again right after a reload by hand', () => {
  let fx: MoveFixture;
  useMoveFixture('depotkit-ca-move-reload-', 2, (made) => (fx = made));

  it('waits for the server to take the pair it finds written, and carries on', async () => {
    const opts: CaMoveOptions = {
      newCert: fx.files.newCert,
      newKey: fx.files.newKey,
      newCa: fx.files.newCa,
      // The site kind without a reload command: serve stands for a server whose reload is sent by hand.
      served: { kind: 'site', certFile: fx.files.served.cert, keyFile: fx.files.served.key, server: 'nginx' },
      depot: depotSpec(fx.depotUrl),
      consumers: fx.targets,
      concurrency: 2,
      timeoutMs: 30_000,
    };
    const first = await moveDepotCa(opts);
    expect(first.phases.at(-1)).toMatchObject({ phase: 'switch', ok: false, note: 'reload-needed' });
    // The reload lands a second after the re-run began, as a reload signalled just before it may.
    const reloading = new Promise<void>((resolve) =>
      setTimeout(() => {
        process.kill(fx.serve.info.pid, 'SIGHUP');
        resolve();
      }, 1000),
    );
    const second = await moveDepotCa(opts);
    await reloading;
    expect(second.phases.find((p) => p.phase === 'switch')).toMatchObject({ ok: true, note: 'already-served' });
    expect(second.ok).toBe(true);
    expect(await servedLeafSha256(fx.depotUrl, 5000)).toBe(second.plan.leaf.sha256);
  }, 120_000);

  it('without the reload, stops for it again after a short wait, the pair left as written', async () => {
    const third = await createCa({ cn: 'Third Depot CA', keySize: 2048 });
    const leaf = await issueServerCert(third, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
    const paths = { newCert: join(fx.dir, 'third-cert.pem'), newKey: join(fx.dir, 'third-key.pem'), newCa: join(fx.dir, 'third-ca.pem') };
    await Promise.all([writeFile(paths.newCert, leaf.certPem), writeFile(paths.newKey, leaf.keyPem, { mode: 0o600 }), writeFile(paths.newCa, third.certPem)]);
    const opts: CaMoveOptions = {
      ...paths,
      served: { kind: 'site', certFile: fx.files.served.cert, keyFile: fx.files.served.key, server: 'nginx' },
      depot: depotSpec(fx.depotUrl),
      consumers: fx.targets,
      concurrency: 2,
      timeoutMs: 30_000,
      // Nothing reloads: the re-run's wait for a reload under way ends at its bound, short here.
      reloadUnderWayMs: 500,
    };
    let leafSha256 = '';
    for (let run = 0; run < 2; run++) {
      const report = await moveDepotCa(opts);
      leafSha256 = report.plan.leaf.sha256;
      expect(report.phases.at(-1)).toMatchObject({ phase: 'switch', ok: false, note: 'reload-needed' });
      expect(await readFile(fx.files.served.key, 'utf8')).toBe(leaf.keyPem);
    }
    expect(leafSha256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(await servedLeafSha256(fx.depotUrl, 5000)).not.toBe(leafSha256);
  }, 120_000);
});
