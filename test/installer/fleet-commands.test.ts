/**
 * What the command line adds to sync, releases, connect-depot and download
 * over a mixed inventory: the flags (--role), the exit codes, the rows and the
 * human lines. The library's part is in new-release.test.ts.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FleetSession, connectDepot, resolveTargets, type FleetRow } from '../../src/installer/index.js';
import { startInstallerSimulator, type InstallerSimulator } from '../../src/simulators/installer/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER, startTestDepot, type TestDepot } from './helpers.js';
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
  depot = await startTestDepot(tmp.dir);
  // Both clocks run ten minutes behind: their syncs end before the release arrives (five minutes ago).
  const clock = () => Date.now() - 10 * MINUTE;
  installer = await startInstallerSimulator({ role: 'installer', version: '9.0.1.0.24962180', users: { [USER]: PASSWORD }, clock });
  manager = await startInstallerSimulator({ role: 'sddc-manager', version: '9.1.1.0.25800000', users: { [SSO_USER]: SSO_PASSWORD }, clock });
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

interface Report<T> {
  ok: boolean;
  installers: Array<FleetRow<T>>;
}
const json = <T>(stdout: string) => JSON.parse(stdout) as Report<T>;
const IDENTITIES = [
  ['installer', 'VcfInstaller', '9.0.1.0.24962180'],
  ['manager', 'SddcManager', '9.1.1.0.25800000'],
];
const identities = <T>(report: Report<T>) => report.installers.map((r) => [r.name, r.role, r.version]);

describe('installer commands over a mixed inventory', () => {
  it('a new release: connect-depot re-syncs both and says why, releases lists it per consumer, download --inventory fetches it on both roles', async () => {
    const inv = ['--inventory', file('site.yaml')];
    const depotArgs = ['--depot-url', `https://localhost:${depot.port}`, '--depot-user', DEPOT_USER, '--depot-password-file', file('depot.pass')];
    // Connected and synced before the release (in-process: what is tested here is the second run).
    const session = new FleetSession(await resolveTargets({ inventory: file('site.yaml') }), { concurrency: 2, timeoutMs: 30_000 });
    const spec = { url: `https://localhost:${depot.port}`, username: DEPOT_USER, password: DEPOT_PASSWORD };
    const connected = await session.run(async (client) => {
      const result = await connectDepot(client, spec, { caPems: [depot.ca.certPem], pollMs: 50, syncPollMs: 50 });
      return { ok: result.ok, result };
    });
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

    const releases = await runCli(['installer', 'releases', ...inv, '--json']);
    expect(releases.code).toBe(0);
    const listed = json<{ releases: Array<{ version: string }> }>(releases.stdout);
    expect(identities(listed)).toEqual(IDENTITIES);
    expect(listed.installers.map((r) => [r.url, r.result!.releases.map((x) => x.version)])).toEqual([
      [installer.url, ['9.0.0.0', '9.0.1.0']],
      [manager.url, ['9.0.0.0', '9.0.1.0']],
    ]);

    const download = await runCli(['installer', 'download', ...inv, '--release', '9.0.1.0', '--json']);
    expect(download.code, download.stdout + download.stderr).toBe(0);
    const fetched = json<{ release: string; bundles: Array<{ component: string; status: string }> }>(download.stdout);
    expect(identities(fetched)).toEqual(IDENTITIES);
    for (const row of fetched.installers) {
      expect(row.ok, row.error?.message).toBe(true);
      expect(row.result!.release).toBe('9.0.1.0');
      expect(row.result!.bundles.length).toBeGreaterThanOrEqual(7);
      expect(row.result!.bundles.every((b) => b.status === 'SUCCESS')).toBe(true);
    }
  }, 180_000);

  it('sync and releases on one consumer: --role picks the administrator of that role, and a consumer answering another role fails naming both and the flags', async () => {
    const one = ['--installer', manager.url, '--installer-ca', file('manager.pem')];
    // No --user: with --role sddc-manager it is the SSO administrator.
    const sync = await runCli(['installer', 'sync', ...one, '--role', 'sddc-manager', '--password-file', file('sso.pass')]);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toMatch(/^127\.0\.0\.1:\d+ {2}SddcManager 9\.1\.1\.0\.25800000 {2}ok {2}sync: SYNCED \(\S+\)\n {4}releases: 9\.0\.0\.0/m);

    // Without --trust-ca the depot's certificate is not trusted here: no date, so a re-sync, the row saying why.
    const undated = await runCli([
      'installer',
      'connect-depot',
      ...one,
      '--role',
      'sddc-manager',
      '--password-file',
      file('sso.pass'),
      '--depot-url',
      `https://localhost:${depot.port}`,
      '--depot-user',
      DEPOT_USER,
      '--depot-password-file',
      file('depot.pass'),
    ]);
    expect(undated.code, undated.stderr).toBe(0);
    expect(undated.stderr).toBe('');
    expect(undated.stdout).toMatch(
      // Said as a success: the sync was sent to be sure, not a failure nested in parentheses.
      /^ {4}sync: SYNCED \(\S+\): settings unchanged; re-synced, as the date of the depot's catalog is not known here: the depot cannot be reached from here: [^()]+ \([A-Z_]+\)$/m,
    );

    const wrong = await runCli(['installer', 'releases', ...one, '--role', 'installer', '--user', SSO_USER, '--password-file', file('sso.pass'), '--json']);
    expect(wrong.code).toBe(1);
    const row = json<unknown>(wrong.stdout).installers[0]!;
    expect(row).toMatchObject({ ok: false, role: 'SddcManager', version: '9.1.1.0.25800000' });
    expect(row.error!.message).toBe(
      `${new URL(manager.url).host} is expected to be an installer (role VcfInstaller) but answers role SddcManager (an SDDC Manager, version 9.1.1.0.25800000): nothing was changed on it.`,
    );
    expect(row.error!.fix).toBe('Give the --role the consumer at that URL has, or the URL of the --installer you meant.');

    const both = await runCli(['installer', 'releases', '--inventory', file('site.yaml'), '--role', 'installer']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--role.*--inventory|--inventory.*--role/);
  }, 120_000);
});
