import { X509Certificate } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { InstallerClient, loadInventory, pushDepot, removeTrusted, ensureTrusted, installerStatus, type FleetRow } from '../../src/installer/index.js';
import { daysLeft, sha256Fingerprint } from '../../src/cert/index.js';
import { startInstallerSimulator, type InstallerSimulator } from '../../src/simulators/installer/index.js';
import { runMain } from '../cli/in-process.js';
import { runCli } from '../helpers/cli.js';
import { useTestDepot } from '../helpers/installer-sim.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER, asCommandLine, simTls, startSim, type TestDepot } from './helpers.js';
import { connectTask, runOnConsumers, statusTask } from './commands.js';

const SSO_USER = 'administrator@vsphere.local';
const SSO_PASSWORD = 'Sso-Adm1n-Secret!';
const OPS_USER = 'ops@local';
const OPS_PASSWORD = 'Ops-0nly-Secret!';
const VERSIONS = ['9.0.1.0.24962180', '9.1.0.0.25368698', '9.1.1.0.25800000'];
/** Consumer i plays role i % 2 at version i % 3: six give each role at each version once, more than --concurrency 4. */
const FLEET = 6;

let dir: string;
let depot: TestDepot;
let depotCaFile: string;

useTestDepot('depotkit-installer-consumers-', (started) => ({ dir, depot } = started));
beforeAll(async () => {
  depotCaFile = join(dir, 'depot-ca.pem');
  await writeFile(depotCaFile, depot.ca.certPem);
});

async function client(sim: InstallerSimulator, user = USER, password = PASSWORD): Promise<InstallerClient> {
  return InstallerClient.connect({ url: sim.url, user, password, trust: { caPems: [sim.caPem] } });
}

describe('installer commands against installers and SDDC Managers', () => {
  it('a mixed inventory of 6 consumers (both roles at each of three versions, own accounts) is pushed (trust and depot) and reported (status) in one run each; a consumer of the wrong role fails its row saying both; remove with and without force', async () => {
    const sims: InstallerSimulator[] = [];
    try {
      // Started at once, with the file's one certificate.
      const entries = await Promise.all(
        Array.from({ length: FLEET }, async (_, i) => {
          const role = i % 2 === 0 ? 'installer' : 'sddc-manager';
          // c04 has its own operator account and password file; the others the administrator of their role.
          const users: Record<string, string> =
            i === 4 ? { [OPS_USER]: OPS_PASSWORD } : role === 'installer' ? { [USER]: PASSWORD } : { [SSO_USER]: SSO_PASSWORD };
          const sim = await startInstallerSimulator({ role, version: VERSIONS[i % 3], users, tls: await simTls() });
          sims[i] = sim;
          const name = `c${String(i).padStart(2, '0')}`;
          await writeFile(join(dir, `${name}.pem`), sim.caPem);
          const account = i === 4 ? `, user: ${OPS_USER}, passwordFile: ops.pass` : role === 'sddc-manager' ? ', passwordFile: sso.pass' : '';
          return `  - { name: ${name}, url: "${sim.url}", role: ${role}, installerCa: ${name}.pem${account} }`;
        }),
      );
      // An SDDC Manager listed as an installer: nothing may be changed on it.
      const misfiled = await startInstallerSimulator({ role: 'sddc-manager', version: VERSIONS[2], users: { [USER]: PASSWORD }, tls: await simTls() });
      sims.push(misfiled);
      await writeFile(join(dir, 'misfiled.pem'), misfiled.caPem);
      entries.push(`  - { name: misfiled, url: "${misfiled.url}", role: installer, installerCa: misfiled.pem }`);
      await writeFile(join(dir, 'installer.pass'), `${PASSWORD}\n`, { mode: 0o600 });
      await writeFile(join(dir, 'sso.pass'), `${SSO_PASSWORD}\n`, { mode: 0o600 });
      await writeFile(join(dir, 'ops.pass'), `${OPS_PASSWORD}\n`, { mode: 0o600 });
      const inventory = join(dir, 'site.yaml');
      await writeFile(inventory, `defaults: { passwordFile: installer.pass }\nconsumers:\n${entries.join('\n')}\n`);
      const inv = ['--inventory', inventory, '--concurrency', '4'];
      const expectRows = <T>(rows: Array<FleetRow<T>>) => {
        expect(rows).toHaveLength(FLEET + 1);
        rows.slice(0, FLEET).forEach((row, i) => {
          expect(row.name).toBe(`c${String(i).padStart(2, '0')}`);
          expect(row.url).toBe(sims[i]!.url);
          expect(row.role).toBe(i % 2 === 0 ? 'VcfInstaller' : 'SddcManager');
          expect(row.version).toBe(VERSIONS[i % 3]);
        });
        expect(rows[FLEET]).toMatchObject({ name: 'misfiled', ok: false, role: 'SddcManager', version: VERSIONS[2] });
        expect(rows[FLEET]!.error!.message).toBe(
          `misfiled is expected to be an installer (role VcfInstaller) but answers role SddcManager (an SDDC Manager, version ${VERSIONS[2]}): nothing was changed on it.`,
        );
      };

      const spec = { url: `https://localhost:${depot.port}`, username: DEPOT_USER, password: DEPOT_PASSWORD };
      const push = await runOnConsumers({ inventory, concurrency: 4 }, connectTask(spec, { caPems: [depot.ca.certPem], sync: false }));
      expect(push.ok).toBe(false);
      expectRows(push.rows);
      for (const row of push.rows.slice(0, FLEET)) {
        expect(row.ok, row.error?.message).toBe(true);
        expect(row.result).toMatchObject({ status: 'DEPOT_CONNECTION_SUCCESSFUL', trusted: [{ action: 'imported' }] });
      }
      expect(misfiled.logs.join('\n')).not.toMatch(/POST \/v1\/sddc-manager\/trusted-certificates|PUT \/v1\/system\/settings\/depot/);

      // The depot's CA is read from the chain each consumer's depot sends: no --ca.
      const caSha256 = sha256Fingerprint(depot.ca.certPem);
      const caDays = daysLeft({ notAfter: new Date(new X509Certificate(depot.ca.certPem).validTo) });
      const status = await runOnConsumers({ inventory, concurrency: 4 }, statusTask());
      expect(status.ok).toBe(false);
      expectRows(status.rows);
      for (const row of status.rows.slice(0, FLEET)) {
        expect(row.ok).toBe(true);
        expect(row.result!.depotCa).toMatchObject({ source: 'depot', present: true, sha256: caSha256, daysLeft: caDays });
        expect(row.result!.depotCa!.flag).toBeUndefined();
        const held = row.result!.trusted.find((t) => t.sha256 === caSha256)!;
        expect(held).toMatchObject({ subject: 'CN=depotkit installer test CA', issuer: 'CN=depotkit installer test CA', daysLeft: caDays });
      }
      // The command line's rows for the fleet, with the depot's CA given.
      const human = await runCli(['installer', 'status', ...inv, '--ca', depotCaFile]);
      expect(human.code).toBe(1);
      expect(human.stdout).toMatch(
        new RegExp(`^c01 {2}SddcManager ${VERSIONS[1]!.replace(/\./g, '\\.')} {2}ok {2}depot: localhost:${depot.port} as ${DEPOT_USER}`, 'm'),
      );
      expect(human.stdout).toMatch(new RegExp(`depot CA: the depot's CA \\(given\\) is trusted as \\S+, ${caDays} days left`));
      expect(human.stdout).toContain(`SHA-256 ${caSha256}`);
      expect(human.stdout).toContain(`${FLEET + 1} consumers: ${FLEET} ok, 1 failed.`);

      // A threshold above the CA's days left flags every consumer.
      const soon = await runOnConsumers({ inventory, concurrency: 4 }, statusTask({ expiryWarnDays: caDays + 1 }));
      expect(soon.rows.slice(0, FLEET).map((r) => [r.ok, r.result!.depotCa!.flag])).toEqual(Array.from({ length: FLEET }, () => [false, 'expiring']));

      // Removing the CA the depot's chain needs is refused without force, on every consumer.
      const remove = (force: boolean) => async (c: InstallerClient) => ({ ok: true, result: await removeTrusted(c, [depot.ca.certPem], { force }) });
      const refused = await runOnConsumers({ inventory, concurrency: 4 }, remove(false));
      for (const row of refused.rows.slice(0, FLEET))
        expect(row.error!.message).toMatch(
          /^CN=depotkit installer test CA \(SHA-256 ([0-9A-F]{2}:){31}[0-9A-F]{2}\) anchors the certificate chain the configured depot localhost:\d+ sends/,
        );
      expect(asCommandLine(refused.rows[0]!.error!.fix)).toContain('--force');
      const removed = await runOnConsumers({ inventory, concurrency: 4 }, remove(true));
      for (const row of removed.rows.slice(0, FLEET)) expect(row.result).toMatchObject([{ action: 'removed', aliases: [expect.stringMatching(/^vcf_/)] }]);
      const after = await runOnConsumers({ inventory, concurrency: 4 }, statusTask());
      for (const row of after.rows.slice(0, FLEET))
        expect([row.ok, row.result!.depotCa]).toEqual([false, { source: 'depot', depot: `localhost:${depot.port}`, present: false, flag: 'missing' }]);
    } finally {
      await Promise.all(sims.map((s) => s?.close()));
    }
  }, 600_000);
});

describe('removing a trusted CA (library)', () => {
  it('finds it by certificate whatever its alias, keeps the one the configured depot needs unless force, and says absent for one not trusted', async () => {
    const sim = await startSim();
    const c = await client(sim);
    try {
      const other = (await import('../../src/cert/index.js')).createCa({ cn: 'another CA', keySize: 2048 });
      const otherPem = (await other).certPem;
      await ensureTrusted(c, [depot.ca.certPem, otherPem]);
      expect(await removeTrusted(c, [otherPem])).toMatchObject([{ subject: 'CN=another CA', action: 'removed' }]);
      expect(await removeTrusted(c, [otherPem])).toMatchObject([{ action: 'absent', aliases: [] }]);
      await pushDepot(c, { hostname: 'localhost', port: depot.port, username: DEPOT_USER, password: DEPOT_PASSWORD });
      await expect(removeTrusted(c, [depot.ca.certPem])).rejects.toThrow(/anchors the certificate chain the configured depot/);
      expect((await c.listTrusted()).elements).toHaveLength(1);
      expect(await removeTrusted(c, [depot.ca.certPem], { force: true })).toMatchObject([{ action: 'removed' }]);
      expect((await installerStatus(c)).depotCa).toMatchObject({ present: false, flag: 'missing' });
    } finally {
      await c.close();
      await sim.close();
    }
  });
});

describe('depot URLs the consumers refuse', () => {
  it('refuses a URL with a query, a fragment or credentials before sending anything, saying why', async () => {
    const sim = await startSim({ version: VERSIONS[2] });
    const c = await client(sim);
    try {
      const base = `https://localhost:${depot.port}/depot`;
      await expect(pushDepot(c, { url: `${base}?release=9.1` })).rejects.toThrow(
        `The depot URL ${base}?release=9.1 has a query string: the installer wants a valid URL without query parameters or fragments.`,
      );
      await expect(pushDepot(c, { url: `${base}#PROD` })).rejects.toThrow(
        `The depot URL ${base}#PROD has a fragment (#...): the installer wants a valid URL without query parameters or fragments.`,
      );
      const withCredentials = pushDepot(c, { url: `https://${DEPOT_USER}:${DEPOT_PASSWORD}@localhost:${depot.port}/depot` });
      await expect(withCredentials).rejects.toThrow(/^The depot URL carries credentials \(user:password@\): the installer refuses a URL with credentials/);
      const err = (await withCredentials.catch((e: unknown) => e)) as Error & { fix?: string };
      expect(`${err.message} ${err.fix}`).not.toContain(DEPOT_PASSWORD);
      expect(err.fix).toBe(`Use \`depotUrl\` ${base} with \`depotUser\` and its password file.`);
      expect(sim.logs.join('\n')).not.toMatch(/ \/v1\/system\/settings\/depot /);
    } finally {
      await c.close();
      await sim.close();
    }
  });

  it('the command line says so too, with exit 2, before logging in', async () => {
    // No password anywhere: the refusal comes before any log-in.
    const unreachable = ['--installer', 'https://127.0.0.1:1', '--password-env', 'NOT_SET_ANYWHERE'];
    // The CLI's main in this process: the built CLI refuses installer usage in names.test.ts and cli.test.ts.
    const res = await runMain(['installer', 'connect-depot', ...unreachable, '--depot-url', `https://localhost:${depot.port}/depot?x=1`]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('has a query string: the installer wants a valid URL without query parameters or fragments.');
    expect(res.stderr).toContain(`--depot-url https://localhost:${depot.port}/depot`);
  });
});

describe('the inventory of consumers', () => {
  it('takes consumers: beside installers:, an expected role, and the administrator of that role as the default user', async () => {
    const file = join(dir, 'mixed.yaml');
    await writeFile(
      file,
      'consumers:\n  - { name: i, url: https://i.lab, role: installer }\n  - { name: m, url: https://m.lab, role: sddc-manager }\n  - { name: m2, url: https://m2.lab, role: sddc-manager, user: ops@vsphere.local }\n  - https://any.lab\n',
    );
    expect((await loadInventory(file)).map((t) => [t.name, t.role, t.user])).toEqual([
      ['i', 'installer', USER],
      ['m', 'sddc-manager', SSO_USER],
      ['m2', 'sddc-manager', 'ops@vsphere.local'],
      ['any.lab', undefined, USER],
    ]);
    await writeFile(file, 'consumers: [https://a.lab]\ninstallers: [https://b.lab]\n');
    await expect(loadInventory(file)).rejects.toThrow(`The inventory ${file} has both "installers" and "consumers": they are the same list, give one.`);
    await writeFile(file, 'consumers: [{ url: https://a.lab, role: nsx-manager }]\n');
    await expect(loadInventory(file)).rejects.toThrow(`installer 1 of ${file}: "role" must be installer, sddc-manager or vcenter.`);
  });
});
