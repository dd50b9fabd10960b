import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/temp.js';

const run = promisify(execFile);

/** Imports the built package by its name, as a user's code does (Node resolves a package's own name through its exports). */
async function shape(specifier: string): Promise<Record<string, string[] | string>> {
  const script = `const m = await import(${JSON.stringify(specifier)});
const out = {};
for (const [k, v] of Object.entries(m)) out[k] = v && typeof v === 'object' && !Array.isArray(v) ? Object.keys(v).sort() : typeof v;
console.log(JSON.stringify(out));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO_ROOT });
  return JSON.parse(stdout) as Record<string, string[] | string>;
}

it('the package exports one namespace per capability, and each as a subpath', async () => {
  const root = await shape('depotkit');
  for (const ns of ['depot', 'cert', 'server', 'check', 'installer', 'vcenter', 'esx', 'procedures', 'transfer', 'exporters', 'simulators', 'constants'])
    expect(root[ns], ns).toBeInstanceOf(Array);
  expect(root.depot).toEqual(expect.arrayContaining(['makeDemoDepot', 'buildDepot', 'verifyDepot']));
  expect(root.installer).toEqual(expect.arrayContaining(['InstallerClient', 'pushDepot', 'syncDepot', 'downloadRelease', 'FleetSession']));
  expect(root.simulators).toEqual(expect.arrayContaining(['startInstallerSimulator', 'startMgmtSimulator']));
  expect(root.DepotkitError).toBe('function');

  const installer = await shape('depotkit/installer');
  expect(installer.downloadRelease).toBe('function');
  const cert = await shape('depotkit/cert');
  expect(cert.createCa).toBe('function');
  expect(cert.certificateCoversHost).toBe('function');
  expect((await shape('depotkit/procedures')).moveDepotCa).toBe('function');
  expect((await shape('depotkit/esx')).verifyEsx).toBe('function');
  expect((await shape('depotkit/check')).checkDepot).toBe('function');
});
