import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS, PACK_MIN_VOLUME_SIZE, componentDir } from '../../src/constants.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { startDepotServer } from '../../src/server/index.js';
import { mirrorDepot } from '../../src/transfer/mirror.js';
import { packDepot } from '../../src/transfer/pack.js';
import { unpackDepot } from '../../src/transfer/unpack.js';
import { tempDir } from '../helpers/temp.js';
import { demo, readCatalog, sha256, treeOf } from './helpers.js';

let base: string;
let cleanup: () => Promise<void>;
let depot: string;
/** The path of the binary the catalog names with a file name of 256 bytes: no file system takes it. */
let longPath: string;

/** A demo depot whose catalog also names a binary with a name longer than NAME_MAX (it cannot be on disk). */
async function depotWithLongName(dir: string): Promise<string> {
  await demo(dir, 4096);
  const catalog = await readCatalog(dir);
  const fileName = `${'x'.repeat(252)}.iso`;
  const body = Buffer.from('a binary no file system can name\n');
  catalog.patches.VCENTER![0]!.artifacts.bundles.push({ name: 'long', type: 'INSTALL', binaries: [{ fileName, size: body.length, checksum: sha256(body) }] });
  await writeFile(join(dir, DEPOT_PATHS.catalog), JSON.stringify(catalog));
  return `${componentDir('VCENTER')}/${fileName}`;
}

beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir('depotkit-long-names-'));
  depot = join(base, 'depot');
  longPath = await depotWithLongName(depot);
});
afterAll(() => cleanup());

describe('a catalog file name longer than NAME_MAX fails its binary alone', () => {
  it('pack carries the rest (the binary is missing) and unpack places it', async () => {
    const pack = await packDepot({ depot, out: join(base, 'pack'), volumeSize: 16 * PACK_MIN_VOLUME_SIZE });
    expect(pack.missing.map((m) => m.path)).toEqual([longPath]);
    expect(pack.ok).toBe(false);

    const out = join(base, 'unpacked');
    const report = await unpackDepot({ media: [join(base, 'pack')], out });
    expect(report.failed).toEqual([]);
    expect(report.metadata).toBe('placed');
    expect(await treeOf(out)).toEqual(await treeOf(depot));
    expect(report.ok).toBe(false);
  });

  it('mirror downloads every other binary and reports that one as failed', async () => {
    const ca = await createCa({ keySize: 2048 });
    const issued = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
    const server = await startDepotServer({ root: depot, host: '127.0.0.1', port: 0, tls: { certPem: issued.chainPem, keyPem: issued.keyPem } });
    try {
      const out = join(base, 'mirrored');
      const report = await mirrorDepot({ url: server.url, out, caPems: [ca.certPem] });
      expect(report.failed).toEqual([{ path: longPath, size: expect.any(Number), reason: expect.stringMatching(/file name is longer than 255 bytes/) }]);
      expect(report.downloaded.length).toBeGreaterThan(0);
      expect(await treeOf(out)).toEqual(await treeOf(depot));
      expect(report.ok).toBe(false);
    } finally {
      await server.close();
    }
  });
});
