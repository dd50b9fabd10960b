import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { parseCatalog } from '../../src/depot/catalog.js';
import { statusData } from '../../src/server/status-data.js';
import { tempDir } from '../helpers/temp.js';
import { demoDepot, writePki } from './status-helpers.js';

const execFileAsync = promisify(execFile);

/**
 * The packages a fresh Node process holds after it built the status data of `root` with the built library: a
 * package imported from ESM or required lazily is in the CommonJS cache once it has been loaded.
 */
async function packagesLoadedByStatus(root: string, certPem: string): Promise<string[]> {
  const script = `
    import { createRequire } from 'node:module';
    const { statusData } = await import(process.argv[1]);
    const data = await statusData(process.argv[2], { certPem: process.env.CERT_PEM, url: 'https://depot.lab.local' });
    if (data.catalog.state !== 'ok' || !data.ca.certificate) throw new Error('the status was not read whole');
    const packages = Object.keys(createRequire(import.meta.url).cache).flatMap((k) => k.split('node_modules/').slice(1, 2));
    console.log(JSON.stringify([...new Set(packages.map((p) => p.split('/')[0]))]));`;
  const entry = join(import.meta.dirname, '../../dist/server/status-data.js');
  const { stdout } = await execFileAsync(process.execPath, ['--input-type=module', '-e', script, entry, root], { env: { ...process.env, CERT_PEM: certPem } });
  return JSON.parse(stdout) as string[];
}

const catalogWith = (fileName: string) =>
  JSON.stringify({
    patches: {
      VCENTER: [
        {
          productVersion: '9.0.0.0.1',
          artifacts: { bundles: [{ name: 'b', type: 'INSTALL', binaries: [{ fileName, size: 3, checksum: 'a'.repeat(64) }] }] },
        },
      ],
    },
  });

describe('what the status page reads with', () => {
  let dir: string;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('depotkit-status-readers-'));
  });
  afterAll(() => cleanup());

  it('loads neither node-forge nor a JSON schema compiler into the serving process', async () => {
    const root = join(dir, 'small');
    await demoDepot(root);
    const pki = await writePki(join(dir, 'pki'));
    const packages = await packagesLoadedByStatus(root, pki.chainPem);
    expect(packages).not.toContain('node-forge');
    expect(packages).not.toContain('ajv');
  });

  it("refuses the file names the depot's catalog reader refuses: a dotfile, a C1 control character", async () => {
    const root = join(dir, 'names');
    await demoDepot(root);
    for (const name of ['.hidden.iso', 'iso\u009b31m.iso']) {
      const text = catalogWith(name);
      expect(() => parseCatalog(text)).toThrow(/file name/);
      await writeFile(join(root, DEPOT_PATHS.catalog), text);
      const data = await statusData(root, { url: 'http://depot.lab.local' });
      expect(data.catalog.state).toBe('invalid');
      expect(data.catalog.message).toMatch(/file name that (starts with '\.'|holds control characters): refused/);
      expect(data.summary).toMatchObject({ complete: false, files: 0 });
    }
  });

  it('lists a name too long for a file system, as missing, as the transfers do', async () => {
    const root = join(dir, 'long');
    await demoDepot(root);
    await writeFile(join(root, DEPOT_PATHS.catalog), catalogWith(`${'a'.repeat(300)}.iso`));
    const data = await statusData(root, { url: 'http://depot.lab.local' });
    expect(data.catalog.state).toBe('ok');
    expect(data.summary).toMatchObject({ files: 1, missing: 1 });
  });
});
