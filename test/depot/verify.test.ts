import { mkdir, readFile, rename, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS, TEMP_PREFIX, VCENTER_UPGRADE_METADATA_DIR, VCENTER_UPGRADE_METADATA_FILES } from '../../src/constants.js';
import { makeDemoDepot, type DemoResult } from '../../src/depot/demo.js';
import { verifyDepot } from '../../src/depot/verify.js';
import { suggestComponent } from '../../src/depot/names.js';
import { runCli } from '../helpers/cli.js';
import { refusal } from '../helpers/output.js';
import { useTempDir } from '../helpers/temp.js';
import { readCatalogBinaries } from './helpers.js';
import { cp } from 'node:fs/promises';

const tmp = useTempDir();
let pristine: string;
let demo: DemoResult;
let counter = 0;

beforeAll(async () => {
  pristine = join(tmp.dir, 'pristine');
  demo = await makeDemoDepot(pristine, { binarySize: 8192 });
});

/** A fresh copy of the demo depot to break one thing in. */
async function copyOfDemo(): Promise<string> {
  const dir = join(tmp.dir, `case-${counter++}`);
  await cp(pristine, dir, { recursive: true });
  return dir;
}

const ids = (r: { findings: { id: string }[] }) => r.findings.map((f) => f.id);

describe('depot verify', () => {
  it('passes a clean demo depot, deep, with its signature checked', async () => {
    const result = await verifyDepot(pristine, { deep: true, signingCertPem: await readFile(demo.signingPublicKey, 'utf8') });
    expect(result.ok).toBe(true);
    expect(result.stats.hashed).toBe(demo.binaries);
    expect(ids(result)).toContain('signature.valid');
    expect(result.findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });

  it('names a misspelt component folder and the folder it should be', async () => {
    const dir = await copyOfDemo();
    await rename(join(dir, 'PROD/COMP/NSX_T_MANAGER'), join(dir, 'PROD/COMP/NSXT_MANAGER'));
    const result = await verifyDepot(dir);
    const f = result.findings.find((x) => x.id === 'layout.component.misspelt')!;
    expect(f.evidence).toEqual({ found: 'NSXT_MANAGER', expected: 'NSX_T_MANAGER' });
    expect(f.fix).toContain('PROD/COMP/NSX_T_MANAGER');
    expect(ids(result)).not.toContain('layout.component.missing');
    expect(result.ok).toBe(false);
  });

  it('suggests components for common slips and nothing for unrelated names', () => {
    expect(suggestComponent('NSXT_MANAGER')).toBe('NSX_T_MANAGER');
    expect(suggestComponent('vcenter')).toBe('VCENTER');
    expect(suggestComponent('SDDC_MANAGER_VFC')).toBe('SDDC_MANAGER_VCF');
    expect(suggestComponent('VCENTER')).toBeUndefined();
    expect(suggestComponent('backups')).toBeUndefined();
  });

  it('reports a missing required component, missing metadata files and leftover temp files', async () => {
    const dir = await copyOfDemo();
    await rm(join(dir, 'PROD/COMP/VROPS'), { recursive: true });
    await rm(join(dir, DEPOT_PATHS.manifest));
    await rm(join(dir, DEPOT_PATHS.compatibility));
    await writeFile(join(dir, 'PROD/COMP/VCENTER', `${TEMP_PREFIX}1234-x.iso`), 'partial');
    const result = await verifyDepot(dir);
    expect(result.findings.filter((f) => f.id === 'layout.component.missing').map((f) => f.path)).toEqual(['PROD/COMP/VROPS']);
    expect(
      result.findings
        .filter((f) => f.id === 'layout.file.missing')
        .map((f) => f.path)
        .sort(),
    ).toEqual([DEPOT_PATHS.compatibility, DEPOT_PATHS.manifest].sort());
    expect(ids(result)).toContain('layout.temp-file');
  });

  it('says when it is pointed at PROD itself or at a folder without PROD', async () => {
    expect(ids(await verifyDepot(join(pristine, 'PROD')))).toEqual(['layout.root.is-prod']);
    expect(ids(await verifyDepot(tmp.dir))).toEqual(['layout.root.missing']);
  });

  it('reports a catalog that is not JSON and one off the schema', async () => {
    const dir = await copyOfDemo();
    await writeFile(join(dir, DEPOT_PATHS.catalog), '{"patches": ');
    expect(ids(await verifyDepot(dir))).toContain('catalog.json.invalid');
    await writeFile(join(dir, DEPOT_PATHS.catalog), '{"patches": {"VCENTER": [{"productVersion": "9"}]}}');
    const schema = await verifyDepot(dir);
    expect(ids(schema)).toContain('catalog.schema.invalid');
    expect(schema.findings.find((f) => f.id === 'catalog.schema.invalid')!.message).toContain('artifacts');
  });

  it('warns about a stale HCL and fails HCL files that disagree', async () => {
    const dir = await copyOfDemo();
    const old = { timestamp: Math.floor(Date.now() / 1000) - 120 * 86400, jsonUpdatedTime: 'long ago' };
    await writeFile(join(dir, DEPOT_PATHS.hclAll), JSON.stringify({ ...old, data: {} }));
    await writeFile(join(dir, DEPOT_PATHS.hclLastUpdated), JSON.stringify(old));
    const stale = await verifyDepot(dir);
    const f = stale.findings.find((x) => x.id === 'hcl.stale')!;
    expect(f.severity).toBe('warning');
    expect(f.evidence!.ageDays).toBe(120);
    expect(stale.ok).toBe(true);
    await writeFile(join(dir, DEPOT_PATHS.hclLastUpdated), JSON.stringify({ ...old, timestamp: old.timestamp + 1 }));
    expect(ids(await verifyDepot(dir))).toContain('hcl.timestamp.mismatch');
  });

  it('reports a missing, a misplaced, a short and (deep) a corrupted binary', async () => {
    const dir = await copyOfDemo();
    const [missing, misplaced, short, corrupt] = await readCatalogBinaries(dir);
    await rm(join(dir, missing!.path));
    await rename(join(dir, misplaced!.path), join(dir, 'PROD/COMP/VCENTER', misplaced!.fileName));
    await truncate(join(dir, short!.path), 10);
    const data = await readFile(join(dir, corrupt!.path));
    data[100] = data[100]! ^ 1;
    await writeFile(join(dir, corrupt!.path), data);

    const shallow = await verifyDepot(dir);
    const byId = (r: typeof shallow, id: string) => r.findings.filter((f) => f.id === id).map((f) => f.path);
    expect(byId(shallow, 'binary.missing')).toEqual([missing!.path]);
    expect(byId(shallow, 'binary.misplaced')).toEqual([misplaced!.path]);
    expect(shallow.findings.find((f) => f.id === 'binary.misplaced')!.fix).toContain(`mv ${join(dir, 'PROD/COMP/VCENTER', misplaced!.fileName)}`);
    expect(byId(shallow, 'binary.size-mismatch')).toEqual([short!.path]);
    expect(byId(shallow, 'binary.checksum-mismatch')).toEqual([]);
    expect(byId(shallow, 'binary.not-in-catalog')).toEqual([`PROD/COMP/VCENTER/${misplaced!.fileName}`]);

    const deep = await verifyDepot(dir, { deep: true });
    expect(byId(deep, 'binary.checksum-mismatch')).toEqual([corrupt!.path]);
  });

  it('says nothing of the vCenter upgrade metadata under PROD/COMP/VCENTER/vmw, and a missing VCENTER binary stays missing', async () => {
    const dir = await copyOfDemo();
    const upgradeDir = join(dir, VCENTER_UPGRADE_METADATA_DIR, '0b6f5c1e-2d3a-4c5b-9e8f-7a6b5c4d3e2f');
    await mkdir(upgradeDir, { recursive: true });
    for (const name of VCENTER_UPGRADE_METADATA_FILES) await writeFile(join(upgradeDir, name), `${name}\n`);
    const clean = await verifyDepot(dir, { deep: true });
    expect(clean.ok).toBe(true);
    expect(clean.findings.filter((f) => f.severity !== 'info')).toEqual([]);
    expect(clean.findings.filter((f) => f.path?.startsWith(VCENTER_UPGRADE_METADATA_DIR))).toEqual([]);

    const vcenter = (await readCatalogBinaries(dir)).find((b) => b.component === 'VCENTER')!;
    await rm(join(dir, vcenter.path));
    const result = await verifyDepot(dir);
    expect(result.findings.filter((f) => f.severity === 'error').map((f) => [f.id, f.path])).toEqual([['binary.missing', vcenter.path]]);
  });

  it('fails a tampered catalog and a signature from another key', async () => {
    const dir = await copyOfDemo();
    const signer = await readFile(demo.signingPublicKey, 'utf8');
    const catalog = JSON.parse(await readFile(join(dir, DEPOT_PATHS.catalog), 'utf8'));
    catalog.tampered = true;
    await writeFile(join(dir, DEPOT_PATHS.catalog), JSON.stringify(catalog));
    expect(ids(await verifyDepot(dir, { signingCertPem: signer }))).toContain('signature.invalid');

    const other = await makeDemoDepot(join(tmp.dir, 'other'), { binarySize: 1 });
    expect(ids(await verifyDepot(pristine, { signingCertPem: await readFile(other.signingPublicKey, 'utf8') }))).toContain('signature.other-signer');
  });

  it('treats a vendor signature as opaque', async () => {
    const dir = await copyOfDemo();
    await writeFile(join(dir, DEPOT_PATHS.catalogSig), Buffer.from([0x30, 0x82, 0x01, 0x00, 0xde, 0xad]));
    const result = await verifyDepot(dir);
    expect(ids(result)).toContain('signature.vendor');
    expect(result.ok).toBe(true);
  });

  it('CLI: exit 0 on a clean depot, 1 with findings as JSON, 2 for a missing signing cert file', async () => {
    const ok = await runCli(['depot', 'verify', pristine, '--deep']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('OK:');
    const dir = await copyOfDemo();
    await rm(join(dir, DEPOT_PATHS.catalogSig));
    const bad = await runCli(['depot', 'verify', dir, '--json']);
    expect(bad.code).toBe(1);
    const json = JSON.parse(bad.stdout);
    expect(json.ok).toBe(false);
    expect(json.findings.find((f: { id: string }) => f.id === 'layout.file.missing').path).toBe(DEPOT_PATHS.catalogSig);
    const usage = await runCli(['depot', 'verify', pristine, '--signing-cert', join(tmp.dir, 'missing.pem')]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('missing.pem does not exist');
    // The library refuses a folder that is not there, in the sentence the command prints.
    const nowhere = await refusal(verifyDepot(join(tmp.dir, 'no-such-depot')));
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain('no-such-depot does not exist.');
  });
});
