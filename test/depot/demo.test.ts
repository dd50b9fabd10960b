import { execFileSync } from 'node:child_process';
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMPONENTS_9_0, DEPOT_PATHS, REQUIRED_COMPONENTS, TEMP_PREFIX } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { verifyDepot } from '../../src/depot/verify.js';
import { validateCatalog, validateHclAll, validateHclLastUpdated } from '../../src/depot/validators.js';
import { verifyCatalogSignature } from '../../src/depot/signature.js';
import { runCli } from '../helpers/cli.js';
import { refusal } from '../helpers/output.js';
import { useTempDir } from '../helpers/temp.js';
import { readCatalogBinaries, sha256 } from './helpers.js';

const tmp = useTempDir(undefined, { each: true });

describe('depot demo', () => {
  it('lays out every 9.0 component, the seven required among them, with a consistent catalog', async () => {
    const root = join(tmp.dir, 'depot');
    const result = await makeDemoDepot(root, { binarySize: 10_000 });
    const folders = (await readdir(join(root, DEPOT_PATHS.comp))).sort();
    expect(folders).toEqual([...COMPONENTS_9_0].sort());
    for (const c of REQUIRED_COMPONENTS) expect(folders).toContain(c);

    const binaries = await readCatalogBinaries(root);
    expect(binaries.length).toBe(result.binaries);
    expect(binaries.map((b) => b.fileName)).toContain('VMware-VCSA-all-9.0.0.0.24755230.iso');
    for (const b of binaries) {
      const data = await readFile(join(root, b.path));
      expect(data.length).toBe(10_000);
      expect(sha256(data)).toBe(b.checksum);
    }
    // Two binaries never share content.
    expect(new Set(binaries.map((b) => b.checksum)).size).toBe(binaries.length);
    expect(validateCatalog(JSON.parse(await readFile(join(root, DEPOT_PATHS.catalog), 'utf8')))).toBe(true);
  });

  it('writes HCL files whose timestamps agree, the manifest and Compatibility data', async () => {
    const root = join(tmp.dir, 'depot');
    await makeDemoDepot(root, { binarySize: 1 });
    const all = JSON.parse(await readFile(join(root, DEPOT_PATHS.hclAll), 'utf8'));
    const last = JSON.parse(await readFile(join(root, DEPOT_PATHS.hclLastUpdated), 'utf8'));
    expect(validateHclAll(all)).toBe(true);
    expect(validateHclLastUpdated(last)).toBe(true);
    expect(last).toEqual({ timestamp: all.timestamp, jsonUpdatedTime: all.jsonUpdatedTime });
    expect(Math.abs(all.timestamp - Date.now() / 1000)).toBeLessThan(600);
    const manifest = JSON.parse(await readFile(join(root, DEPOT_PATHS.manifest), 'utf8'));
    expect(manifest.releases[0].bom.length).toBe(COMPONENTS_9_0.length);
    expect(JSON.parse(await readFile(join(root, DEPOT_PATHS.compatibility), 'utf8')).compatibilities.length).toBe(COMPONENTS_9_0.length);
  });

  it('signs the catalog so that the public key alone verifies it, with our code and with openssl', async () => {
    const root = join(tmp.dir, 'depot');
    const result = await makeDemoDepot(root, { binarySize: 1 });
    expect((await stat(result.signingKey)).mode & 0o777).toBe(0o600);
    expect(result.signingKey.startsWith(root + '/')).toBe(false); // the key is outside the web root
    const catalog = await readFile(join(root, DEPOT_PATHS.catalog));
    const sigText = await readFile(join(root, DEPOT_PATHS.catalogSig), 'utf8');
    const publicPem = await readFile(result.signingPublicKey, 'utf8');
    expect(verifyCatalogSignature(catalog, sigText, publicPem).status).toBe('valid');
    expect(verifyCatalogSignature(Buffer.concat([catalog, Buffer.from(' ')]), sigText, publicPem).status).toBe('invalid');

    const sigDer = join(tmp.dir, 'sig.der');
    await writeFile(sigDer, Buffer.from(JSON.parse(sigText).signature, 'base64'));
    const out = execFileSync('openssl', ['dgst', '-sha256', '-verify', result.signingPublicKey, '-signature', sigDer, join(root, DEPOT_PATHS.catalog)], {
      encoding: 'utf8',
    });
    expect(out.trim()).toBe('Verified OK');
  });

  it('reuses the signing key on a re-made depot, so the same public key keeps verifying, and clears the partial files a killed run left', async () => {
    const first = await makeDemoDepot(join(tmp.dir, 'depot'), { binarySize: 1 });
    const key = await readFile(first.signingKey, 'utf8');
    const partials = [join(DEPOT_PATHS.comp, 'VCENTER', `${TEMP_PREFIX}1-a.iso`), join(DEPOT_PATHS.hclDir, `${TEMP_PREFIX}2-b.json`)];
    for (const partial of partials) await writeFile(join(tmp.dir, 'depot', partial), 'x');
    const second = await makeDemoDepot(join(tmp.dir, 'depot'), { binarySize: 1, force: true });
    expect(await readFile(second.signingKey, 'utf8')).toBe(key);
    expect((await readdir(join(tmp.dir, 'depot'), { recursive: true })).filter((f) => f.includes(TEMP_PREFIX))).toEqual([]);
  });

  it('lays out a 9.1 depot: VRSLCM gone, fleet services as yaml + tgz sets', async () => {
    const root = join(tmp.dir, 'depot91');
    await makeDemoDepot(root, { release: '9.1', binarySize: 1 });
    const folders = await readdir(join(root, DEPOT_PATHS.comp));
    expect(folders).not.toContain('VRSLCM');
    expect(folders).toContain('VCF_FLEET_LCM');
    const files = (await readCatalogBinaries(root)).filter((b) => b.component === 'DEPOT_SERVICE').map((b) => b.fileName);
    expect(files.some((f) => f.endsWith('.yaml'))).toBe(true);
    expect(files.some((f) => f.endsWith('.tgz'))).toBe(true);
    expect(files[0]).toMatch(/^depot-service-9\.1\.0\.0\.\d+\.yaml$/);
    // The installer's required folders follow the release: no VRSLCM is needed in 9.1.
    const verified = await verifyDepot(root, { deep: true });
    expect(verified.findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });

  it('CLI: makes a depot (--releases a comma-separated list), refuses an existing one without --force (exit 2), parses sizes', async () => {
    const root = join(tmp.dir, 'cli-depot');
    const made = await runCli(['depot', 'demo', root, '--releases', '9.0.0.0,9.0.1.0', '--binary-size', '2K', '--json']);
    expect(made.code).toBe(0);
    const result = JSON.parse(made.stdout);
    expect(result.releases).toEqual(['9.0.0.0', '9.0.1.0']);
    expect(result.totalBytes).toBe(2048 * result.binaries);

    const again = await runCli(['depot', 'demo', root]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already exists and is not empty');
    expect(again.stderr).toContain('--force');
    expect(again.stderr).not.toMatch(/\n\s+at /); // no stack trace

    expect((await runCli(['depot', 'demo', root, '--force', '--binary-size', '1'])).code).toBe(0);
    const bad = await runCli(['depot', 'demo', join(tmp.dir, 'x'), '--binary-size', 'lots']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is not a size');
    const badRelease = await runCli(['depot', 'demo', join(tmp.dir, 'y'), '--release', '8.0']);
    expect(badRelease.code).toBe(2);
    expect(badRelease.stderr).toContain('--release must be one of 9.0, 9.1');
  });

  it('makes a depot of several releases: a GA, its patch and the next GA, each dated by its version, all complete', async () => {
    const root = join(tmp.dir, 'releases');
    const result = await makeDemoDepot(root, { releases: ['9.1.0.0', '9.0.1', '9.0.0.0'], binarySize: 1 });
    expect(result.releases).toEqual(['9.0.0.0', '9.0.1.0', '9.1.0.0']);
    const manifest = JSON.parse(await readFile(join(root, DEPOT_PATHS.manifest), 'utf8')) as {
      releases: { version: string; releaseDate: string; bom: { name: string; version: string }[] }[];
    };
    // Dated by version, not by the day the demo was made: two demos order alike whenever they were made.
    expect(manifest.releases.map((r) => [r.version, r.releaseDate])).toEqual([
      ['9.0.0.0', '2025-06-17'],
      ['9.0.1.0', '2025-07-17'],
      ['9.1.0.0', '2025-12-14'],
    ]);
    const [ga, patch] = manifest.releases;
    const changed = patch!.bom.filter((b) => !ga!.bom.some((g) => g.name === b.name && g.version === b.version)).map((b) => b.name);
    expect(changed.sort()).toEqual(['NSX_T_MANAGER', 'VCENTER']);
    expect(patch!.bom.find((b) => b.name === 'VCENTER')!.version).toMatch(/^9\.0\.1\.0\.\d+$/);
    const catalog = JSON.parse(await readFile(join(root, DEPOT_PATHS.catalog), 'utf8')) as {
      patches: Record<string, { productVersion: string; artifacts: { bundles: { type: string }[] } }[]>;
    };
    expect(validateCatalog(catalog)).toBe(true);
    expect(catalog.patches.VCENTER!.map((v) => [v.productVersion.split('.').slice(0, 4).join('.'), v.artifacts.bundles[0]!.type])).toEqual([
      ['9.0.0.0', 'INSTALL'],
      ['9.0.1.0', 'PATCH'],
      ['9.1.0.0', 'INSTALL'],
    ]);
    const verified = await verifyDepot(root);
    expect(verified.ok).toBe(true);
    expect(verified.releases.map((r) => [r.version, r.state])).toEqual(result.releases.map((v) => [v, 'complete']));
    await expect(makeDemoDepot(join(tmp.dir, 'lone-patch'), { releases: ['9.0.1.0'] })).rejects.toThrow('The patch 9.0.1.0 keeps the builds of 9.0.0.0');
  });

  it('--releases refuses a version that is no demo release (exit 2), and is not given with --release', async () => {
    // The library refuses the version, in the sentence the command prints.
    const bad = await refusal(makeDemoDepot(join(tmp.dir, 'bad-releases'), { releases: ['8.0.0.0'] }));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('A demo release is 9.0.0.0 or 9.1.0.0, or one of their patches (e.g. 9.0.1.0), not "8.0.0.0".');
    const both = await runCli(['depot', 'demo', join(tmp.dir, 'both'), '--releases', '9.0.0.0', '--release', '9.1']);
    expect(both.code).toBe(2);
  });
});
