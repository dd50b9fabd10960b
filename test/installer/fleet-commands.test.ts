/**
 * sync, releases, connect-depot and download over a mixed inventory: the rows
 * and their words, each command's work in-process; the built CLI for what only
 * it does, a fleet's human rows and the --role flag. The library's part of a
 * new release is in new-release.test.ts.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { depotLine } from '../../src/cli/installer-output.js';
import { listReleases, type FleetRow, type InstallerClient } from '../../src/installer/index.js';
import { EXIT } from '../../src/util/errors.js';
import { startInstallerSimulator, type InstallerSimulator } from '../../src/simulators/installer/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER, asCommandLine, simTls, startTestDepot, type TestDepot } from './helpers.js';
import { connectTask, downloadTask, runOnConsumers } from './commands.js';
import { addRelease } from './release-depot.js';

const SSO_USER = 'administrator@vsphere.local';
const SSO_PASSWORD = 'Sso-Adm1n-Secret!';
const MINUTE = 60_000;

let tmp: { dir: string; cleanup: () => Promise<void> };
let depot: TestDepot;
let installer: InstallerSimulator;
let manager: InstallerSimulator;
const file = (name: string) => join(tmp.dir, name);

beforeAll(async () => {
  tmp = await tempDir('depotkit-fleet-commands-');
  site.inventory = file('site.yaml');
  depot = await startTestDepot(tmp.dir);
  // Both clocks run ten minutes behind: their syncs end before the release arrives (five minutes ago).
  const clock = () => Date.now() - 10 * MINUTE;
  installer = await startInstallerSimulator({ role: 'installer', version: '9.0.1.0.24962180', users: { [USER]: PASSWORD }, clock, tls: await simTls() });
  manager = await startInstallerSimulator({
    role: 'sddc-manager',
    version: '9.1.1.0.25800000',
    users: { [SSO_USER]: SSO_PASSWORD },
    clock,
    tls: await simTls(),
  });
  await writeFile(file('installer.pem'), installer.caPem);
  await writeFile(file('manager.pem'), manager.caPem);
  await writeFile(file('depot-ca.pem'), depot.ca.certPem);
  await writeFile(file('installer.pass'), `${PASSWORD}\n`, { mode: 0o600 });
  await writeFile(file('sso.pass'), `${SSO_PASSWORD}\n`, { mode: 0o600 });
  await writeFile(file('depot.pass'), `${DEPOT_PASSWORD}\n`, { mode: 0o600 });
  await writeFile(
    file('site.yaml'),
    [
      'consumers:',
      `  - { name: installer, url: "${installer.url}", role: installer, passwordFile: installer.pass, installerCa: installer.pem }`,
      `  - { name: manager, url: "${manager.url}", role: sddc-manager, passwordFile: sso.pass, installerCa: manager.pem }`,
      '',
    ].join('\n'),
  );
});
afterAll(async () => {
  await Promise.all([installer?.close(), manager?.close()]);
  await depot?.close();
  await tmp?.cleanup();
});

const site = { inventory: '', concurrency: 2 };
const IDENTITIES = [
  ['installer', 'VcfInstaller', '9.0.1.0.24962180'],
  ['manager', 'SddcManager', '9.1.1.0.25800000'],
];
const identities = <T>(rows: Array<FleetRow<T>>) => rows.map((r) => [r.name, r.role, r.version]);
const releasesTask = async (client: InstallerClient) => ({ ok: true, result: await listReleases(client) });

describe('installer commands over a mixed inventory', () => {
  it('a new release: connect-depot re-syncs both and says why, releases lists it per consumer, download --inventory fetches it on both roles', async () => {
    const inv = ['--inventory', file('site.yaml')];
    const depotArgs = ['--depot-url', `https://localhost:${depot.port}`, '--depot-user', DEPOT_USER, '--depot-password-file', file('depot.pass')];
    // Connected and synced before the release (in-process, as the rest: what the command line adds is the second run's rows).
    const spec = { url: `https://localhost:${depot.port}`, username: DEPOT_USER, password: DEPOT_PASSWORD };
    const connected = (await runOnConsumers(site, connectTask(spec, { caPems: [depot.ca.certPem] }))).rows;
    expect(connected.map((r) => [r.ok, r.result!.sync!.action, r.result!.releases])).toEqual([
      [true, 'synced', ['9.0.0.0']],
      [true, 'synced', ['9.0.0.0']],
    ]);

    await addRelease(join(tmp.dir, 'depot'), '9.0.1.0', ['VCENTER', 'NSX_T_MANAGER'], 2048, new Date(Date.now() - 5 * MINUTE));
    const again = await runCli(['installer', 'connect-depot', ...inv, ...depotArgs, '--trust-ca', file('depot-ca.pem')]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe('');
    for (const [i, [name, role, version]] of IDENTITIES.entries()) {
      const previous = connected[i]!.result!.sync!.completedAt!.replace(/\./g, '\\.');
      expect(again.stdout).toMatch(
        new RegExp(
          `^${name} {2}${role} ${version!.replace(/\./g, '\\.')} {2}ok {2}depot localhost:${depot.port}: DEPOT_CONNECTION_SUCCESSFUL \\(already set, nothing sent\\)\\n` +
            ` {4}already trusted: .*\\n` +
            ` {4}sync: SYNCED \\(\\S+\\): settings unchanged; the depot's catalog changed since the last sync at ${previous}: re-synced\\n` +
            ` {4}releases: 9\\.0\\.0\\.0, 9\\.0\\.1\\.0$`,
          'm',
        ),
      );
    }
    expect(again.stdout).toContain('2 consumers: 2 ok, 0 failed.');

    const releases = await runOnConsumers(site, releasesTask);
    expect(releases.ok).toBe(true);
    expect(identities(releases.rows)).toEqual(IDENTITIES);
    expect(releases.rows.map((r) => [r.url, r.result!.releases.map((x) => x.version)])).toEqual([
      [installer.url, ['9.0.0.0', '9.0.1.0']],
      [manager.url, ['9.0.0.0', '9.0.1.0']],
    ]);

    const download = await runOnConsumers(site, downloadTask({ release: '9.0.1.0' }));
    expect(identities(download.rows)).toEqual(IDENTITIES);
    for (const row of download.rows) {
      expect(row.ok, row.error?.message).toBe(true);
      expect(row.result!.release).toBe('9.0.1.0');
      expect(row.result!.bundles.length).toBeGreaterThanOrEqual(7);
      expect(row.result!.bundles.every((b) => b.status === 'SUCCESS')).toBe(true);
    }
    expect(download.ok).toBe(true);
  }, 180_000);

  it('sync and releases on one consumer: --role picks the administrator of that role, and a consumer answering another role fails naming both and the flags', async () => {
    // No --user: with --role sddc-manager it is the SSO administrator.
    const sync = await runCli([
      'installer',
      'sync',
      '--installer',
      manager.url,
      '--installer-ca',
      file('manager.pem'),
      '--role',
      'sddc-manager',
      '--password-file',
      file('sso.pass'),
    ]);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toMatch(/^127\.0\.0\.1:\d+ {2}SddcManager 9\.1\.1\.0\.25800000 {2}ok {2}sync: SYNCED \(\S+\)\n {4}releases: 9\.0\.0\.0/m);

    // Without the depot's CA its certificate is not trusted here: no date, so a re-sync, the row saying why.
    const manager1 = { installer: manager.url, installerCa: file('manager.pem'), role: 'sddc-manager' as const, passwordFile: file('sso.pass') };
    const undated = await runOnConsumers(manager1, connectTask({ url: `https://localhost:${depot.port}`, username: DEPOT_USER, password: DEPOT_PASSWORD }));
    expect(undated.ok, JSON.stringify(undated.rows)).toBe(true);
    expect(undated.warnings).toEqual([]);
    expect(depotLine(undated.rows[0]!.result!)).toContainEqual(
      // Said as a success: the sync was sent to be sure, not a failure nested in parentheses.
      expect.stringMatching(
        /^sync: SYNCED \(\S+\): settings unchanged; re-synced, as the date of the depot's catalog is not known here: the depot cannot be reached from here: [^()]+ \([A-Z_]+\)$/,
      ),
    );

    const wrong = await runOnConsumers({ ...manager1, role: 'installer', user: SSO_USER }, releasesTask);
    expect(wrong.ok).toBe(false);
    const row = wrong.rows[0]!;
    expect(row).toMatchObject({ ok: false, role: 'SddcManager', version: '9.1.1.0.25800000' });
    expect(row.error!.message).toBe(
      `${new URL(manager.url).host} is expected to be an installer (role VcfInstaller) but answers role SddcManager (an SDDC Manager, version 9.1.1.0.25800000): nothing was changed on it.`,
    );
    expect(asCommandLine(row.error!.fix)).toBe('Give the --role the consumer at that URL has, or the URL of the --installer you meant.');

    // The flags that conflict are refused by the command line; the library refuses the same pair in its own words.
    const both = await runCli(['installer', 'releases', '--inventory', file('site.yaml'), '--role', 'installer']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--role.*--inventory|--inventory.*--role/);
    await expect(runOnConsumers({ ...site, role: 'installer' }, releasesTask)).rejects.toMatchObject({
      exitCode: EXIT.usage,
      message: expect.stringContaining('An inventory gives each consumer its own role'),
    });
  }, 120_000);
});
