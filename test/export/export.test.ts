import { chmod, copyFile, mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import apacheMd5 from 'apache-md5';
import { describe, expect, it } from 'vitest';
import { DEPOT_ROOT_DIR } from '../../src/constants.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { exportConfig, type ExportOptions, type ExportReport } from '../../src/export/index.js';
import { usageRefusal } from '../cert/refusal.js';
import { onTheCommandLine } from '../cert/words.js';
import { CADDY, PASSWORD, USER, fixtureForFile } from './helpers.js';

// What exportConfig writes and refuses, in-process; cli.test.ts keeps what only the command line does.
const fixture = fixtureForFile();
const outDir = fixture.outDir;
const AUTH = { user: USER, password: PASSWORD };

/** The options of `export <target>` with the fixture's depot, certificate and key into a fresh folder, and `extra`. */
const options = (target: ExportOptions['target'], extra: Partial<ExportOptions> = {}): ExportOptions => ({
  target,
  root: fixture.root,
  out: outDir(),
  cert: fixture.certFile,
  key: fixture.keyFile,
  ...extra,
});

/** The report, its steps and warnings worded as the command line prints them. */
async function exported(target: ExportOptions['target'], extra: Partial<ExportOptions> = {}): Promise<ExportReport> {
  const report = await exportConfig(options(target, extra));
  return {
    ...report,
    nextSteps: report.nextSteps.map(onTheCommandLine),
    check: onTheCommandLine(report.check),
    warnings: report.warnings.map(onTheCommandLine),
  };
}

/** The refusal of `opts`: exit 2 and its sentence as the command line words it. */
async function refusal(opts: ExportOptions): Promise<string> {
  return onTheCommandLine((await usageRefusal(exportConfig(opts))).message);
}

/** Every written file's text, for the password hunt. */
async function allText(dir: string): Promise<string> {
  const names = await readdir(dir);
  return (await Promise.all(names.map((name) => readFile(join(dir, name), 'utf8')))).join('\n');
}

describe('exportConfig', () => {
  it.each(['nginx', 'apache', 'caddy', 'systemd'] as const)('%s: writes its files, nothing secret in clear, and says what to do next', async (server) => {
    const report = await exported(server, { auth: AUTH, openHcl: true });
    expect(report.target).toBe(server);
    expect(report.url).toBe('https://depot.test');
    expect(report.open).toEqual(['PROD/vsan/hcl']);
    const users = report.files.find((f) => f.role === 'users')!;
    expect(`${JSON.stringify(report)}${await allText(join(users.path, '..'))}`).not.toContain(PASSWORD);
    expect(users.mode).toBe(0o640);
    expect((await stat(users.path)).mode & 0o777).toBe(0o640);
    for (const f of report.files.filter((f) => f.role !== 'users')) expect((await stat(f.path)).mode & 0o777).toBe(0o644);
    // The configuration names the users file where it was written.
    const config = await readFile(report.files[0]!.path, 'utf8');
    expect(config).toContain(users.path);
    expect(config).toContain(fixture.keyFile);
    expect(report.check).toBe(
      `depotkit check https://depot.test --ca <the CA certificate the installer trusts> --user ${USER} --password-file <${USER}'s password file>`,
    );
    expect(report.nextSteps.at(-1)).toBe(report.check);
    expect(report.nextSteps.join('\n')).toMatch(
      server === 'systemd' ? /systemctl reload depotkit/ : new RegExp(`systemctl reload ${server === 'apache' ? 'apache2' : server}`),
    );
  });

  it('never replaces a file without force, and leaves it as it was', async () => {
    const opts = options('apache', { auth: AUTH });
    await exportConfig(opts);
    const site = join(opts.out, 'depotkit.conf');
    await writeFile(site, 'mine\n');
    expect(await refusal(opts)).toContain(`${site} already exists.`);
    expect(await readFile(site, 'utf8')).toBe('mine\n');
    await exportConfig({ ...opts, force: true });
    expect(await readFile(site, 'utf8')).toContain('<VirtualHost *:443>');
  });

  it.each<[Partial<ExportOptions>, string]>([
    [{ cert: undefined, key: undefined }, 'No certificate given.'],
    [{ serverName: 'bad name' }, 'is not a host name'],
    [{ out: '/tmp/with space/x' }, 'holds characters that the server configuration would read as syntax'],
    [{ openPrefixes: ['../etc'], auth: AUTH }, '".." segment'],
    [{ name: 'Depot Kit' }, '--name "Depot Kit" must start'],
    [{ root: DEPOT_ROOT_DIR }, `is the ${DEPOT_ROOT_DIR} folder itself`],
  ])('refuses %j: one sentence, exit 2', async (extra, message) => {
    // The root given as the depot's own folder, under the fixture's web root.
    const root = extra.root === undefined ? fixture.root : join(fixture.root, extra.root);
    expect(await refusal(options('nginx', { ...extra, root }))).toContain(message);
  });

  it("refuses a key that is not the certificate's before writing anything", async () => {
    const other = await issueServerCert(await createCa({ keySize: 2048 }), { dns: ['depot.test'], keySize: 2048 });
    const wrongKey = join(fixture.dir, 'wrong-key.pem');
    await writeFile(wrongKey, other.keyPem, { mode: 0o600 });
    const opts = options('nginx', { key: wrongKey });
    await refusal(opts);
    await expect(stat(opts.out)).rejects.toThrow();
  });

  it('reads a given htpasswd file where it is (nginx, Apache, systemd) and warns nginx about bcrypt', async () => {
    const htpasswd = join(fixture.dir, 'users.htpasswd');
    await writeFile(htpasswd, `${USER}:${bcrypt.hashSync(PASSWORD, 4).replace(/^\$2b\$/, '$2y$')}\nother:${apacheMd5('x')}\n`);
    const report = await exported('nginx', { auth: { htpasswdFile: htpasswd } });
    expect(report.reads.htpasswd).toBe(htpasswd);
    expect(report.files.map((f) => f.role)).toEqual(['site']);
    expect(await readFile(report.files[0]!.path, 'utf8')).toContain(`auth_basic_user_file "${htpasswd}";`);
    expect(report.warnings.join('\n')).toMatch(/nginx checks bcrypt hashes \(depot\) through the C library's crypt\(\)/);
    const apache = await exported('apache', { auth: { htpasswdFile: htpasswd } });
    expect(apache.warnings.join('\n')).not.toMatch(/bcrypt/);
    expect(apache.nextSteps.join('\n')).toContain(`sudo chgrp www-data ${htpasswd}`);
  });

  it('copies bcrypt users into the file a Caddyfile imports, and refuses $apr1$ for Caddy', async () => {
    const good = join(fixture.dir, 'bcrypt.htpasswd');
    const hash = bcrypt.hashSync(PASSWORD, 4).replace(/^\$2b\$/, '$2y$');
    await writeFile(good, `${USER}:${hash}\n`);
    const report = await exported('caddy', { auth: { htpasswdFile: good }, caddyVersion: '2.6.2' });
    const users = report.files.find((f) => f.role === 'users')!;
    expect(await readFile(users.path, 'utf8')).toBe(`${USER} ${hash}\n`);
    const apr1 = join(fixture.dir, 'apr1.htpasswd');
    await writeFile(apr1, `${USER}:${apacheMd5(PASSWORD)}\n`);
    expect(await refusal(options('caddy', { auth: { htpasswdFile: apr1 }, caddyVersion: '2.6.2' }))).toContain(
      'holds $apr1$ hashes (depot); Caddy checks bcrypt only.',
    );
  });

  it.each([
    ['2.6.2', 'basicauth'],
    ['2.7.6', 'basicauth'],
    ['2.8.4', 'basic_auth'],
    ['2.10.0', 'basic_auth'],
  ])('writes the Basic auth directive Caddy %s knows: %s', async (version, directive) => {
    const report = await exported('caddy', { auth: AUTH, caddyVersion: version });
    expect(report.caddy).toEqual({ version, directive });
    const caddyfile = await readFile(report.files[0]!.path, 'utf8');
    expect(caddyfile).toMatch(new RegExp(`^\\t${directive} bcrypt depot \\{$`, 'm'));
  });

  it("caddy: before the reload, a step keeps Caddy's reloads from resetting the connections that wait on its old socket, across boots too", async () => {
    const report = await exported('caddy', { auth: AUTH, caddyVersion: '2.6.2' });
    const file = '/etc/sysctl.d/60-depotkit-caddy.conf';
    const sysctl = report.nextSteps.findIndex((s) => s.startsWith(`echo net.ipv4.tcp_migrate_req=1 | sudo tee ${file} && sudo sysctl -p ${file}   # `));
    expect(sysctl).toBeGreaterThan(0);
    expect(report.nextSteps[sysctl + 1]).toMatch(/^caddy validate .* && sudo systemctl reload caddy$/);
  });

  it("caddy: a folder above the certificate or key that Caddy's user cannot pass through (cert issue makes them 0700) gets a step", async () => {
    const open = await exported('caddy', { auth: AUTH, caddyVersion: '2.6.2' });
    expect(open.nextSteps.join('\n')).not.toContain('reaches the certificate and key');
    const closed = join(fixture.dir, 'closed-tls');
    await mkdir(closed, { mode: 0o700 });
    await chmod(closed, 0o700);
    await Promise.all([copyFile(fixture.certFile, join(closed, 'chain.pem')), copyFile(fixture.keyFile, join(closed, 'key.pem'))]);
    const report = await exported('caddy', { cert: join(closed, 'chain.pem'), key: join(closed, 'key.pem'), auth: AUTH, caddyVersion: '2.6.2' });
    expect(report.nextSteps).toContain(
      `sudo chgrp caddy ${closed} && sudo chmod g+x ${closed}   # Caddy, as its own user, reaches the certificate and key through these`,
    );
  });

  it.skipIf(!CADDY)('asks the installed caddy for its version when none is given', async () => {
    const report = await exported('caddy', { auth: AUTH });
    expect(report.caddy?.version).toMatch(/^2\.\d+/);
    expect(report.caddy?.directive).toBe(Number(report.caddy!.version!.split('.')[1]) >= 8 ? 'basic_auth' : 'basicauth');
  });

  it('without auth: warns, and writes no auth at all', async () => {
    const report = await exported('nginx', { openHcl: true });
    expect(report.warnings.join('\n')).toContain('anyone who can reach the port can download the depot');
    expect(report.warnings.join('\n')).toContain('--open and --open-hcl do nothing without auth');
    expect(await readFile(report.files[0]!.path, 'utf8')).not.toContain('auth_basic');
    expect(report.files).toHaveLength(1);
  });

  it('takes the server name from the certificate unless given, and listens where told', async () => {
    const report = await exported('apache', { auth: AUTH, serverName: 'depot.lab.example', host: '10.0.0.5', port: 8443 });
    expect(report.url).toBe('https://depot.lab.example:8443');
    const vhost = await readFile(report.files[0]!.path, 'utf8');
    expect(vhost).toContain('<VirtualHost 10.0.0.5:8443>');
    expect(vhost).toContain('ServerName depot.lab.example');
    expect(report.nextSteps.join('\n')).toContain("echo 'Listen 8443' | sudo tee -a /etc/apache2/ports.conf");
  });
});
