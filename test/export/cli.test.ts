import { chmod, copyFile, mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import apacheMd5 from 'apache-md5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_ROOT_DIR } from '../../src/constants.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { runCli } from '../helpers/cli.js';
import { CADDY, PASSWORD, USER, makeFixture, type Fixture } from './helpers.js';

interface Report {
  target: string;
  url: string;
  files: Array<{ path: string; role: string; mode: number; group?: string }>;
  reads: { cert?: string; key?: string; htpasswd?: string };
  open: string[];
  caddy?: { version?: string; directive: string };
  nextSteps: string[];
  check: string;
  warnings: string[];
}

let fixture: Fixture;
let n = 0;
beforeAll(async () => {
  fixture = await makeFixture();
});
afterAll(() => fixture?.cleanup());

const outDir = () => join(fixture.dir, `out-${++n}`);
const tls = () => ['--cert', fixture.certFile, '--key', fixture.keyFile];
const auth = () => ['--user', USER, '--password-file', fixture.passwordFile];

async function exportJson(args: string[]): Promise<{ report: Report; stderr: string }> {
  const r = await runCli(['export', ...args, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return { report: JSON.parse(r.stdout) as Report, stderr: r.stderr };
}

/** Every written file's text, for the password hunt. */
async function allText(dir: string): Promise<string> {
  const names = await readdir(dir);
  return (await Promise.all(names.map((name) => readFile(join(dir, name), 'utf8')))).join('\n');
}

describe('depotkit export (the built CLI)', () => {
  it.each(['nginx', 'apache', 'caddy', 'systemd'])('%s: writes its files, nothing secret in clear, and says what to do next', async (server) => {
    const out = outDir();
    const r = await runCli(['export', server, fixture.root, '--out', out, ...tls(), ...auth(), '--open-hcl', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.target).toBe(server);
    expect(report.url).toBe('https://depot.test');
    expect(report.open).toEqual(['PROD/vsan/hcl']);
    expect(`${r.stdout}${r.stderr}${await allText(out)}`).not.toContain(PASSWORD);
    const users = report.files.find((f) => f.role === 'users')!;
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

  it('prints the files, what they read and the numbered next steps for a person', async () => {
    const out = outDir();
    const r = await runCli(['export', 'nginx', fixture.root, '--out', out, ...tls(), ...auth()]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Wrote the nginx configuration for ${fixture.root}, served as https://depot.test:`);
    expect(r.stdout).toContain(`  ${join(out, 'depotkit.htpasswd')}  (mode 0640`);
    expect(r.stdout).toContain(`  reads key: ${fixture.keyFile}`);
    expect(r.stdout).toMatch(/\nNext:\n {2}1\. sudo ln -s .*depotkit\.conf \/etc\/nginx\/conf\.d\/depotkit\.conf/);
    expect(r.stdout).toMatch(/ {2}\d\. sudo nginx -t && sudo systemctl reload nginx\n/);
  });

  it('never replaces a file without --force, and leaves it as it was', async () => {
    const out = outDir();
    await exportJson(['apache', fixture.root, '--out', out, ...tls(), ...auth()]);
    const site = join(out, 'depotkit.conf');
    await writeFile(site, 'mine\n');
    const again = await runCli(['export', 'apache', fixture.root, '--out', out, ...tls(), ...auth()]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`${site} already exists.`);
    expect(await readFile(site, 'utf8')).toBe('mine\n');
    await exportJson(['apache', fixture.root, '--out', out, ...tls(), ...auth(), '--force']);
    expect(await readFile(site, 'utf8')).toContain('<VirtualHost *:443>');
  });

  it.each([
    [['nginx', '<root>', '--out', '<out>'], 'No certificate given.'],
    [['iis', '<root>', '--out', '<out>', '<tls>'], '"iis" is not a server depotkit exports for'],
    [['nginx', '<root>', '--out', '<out>', '--ca', '/tmp'], '--ca is for the systemd export only.'],
    [['apache', '<root>', '--out', '<out>', '<tls>', '--workers', '2'], '--workers is for the systemd export only.'],
    [['nginx', '<root>', '--out', '<out>', '<tls>', '--caddy-version', '2.8'], '--caddy-version is for the caddy export only.'],
    [['caddy', '<root>', '--out', '<out>', '<tls>', '--caddy-version', 'latest'], 'is not a Caddy 2 version'],
    [['nginx', '<root>', '--out', '<out>', '<tls>', '--user', USER], `The password of depot user ${USER} is needed and there is no terminal to ask on.`],
    [['nginx', '<root>', '--out', '<out>', '<tls>', '--password-env', 'X'], '--password-env needs --user'],
    [['nginx', '<root>', '--out', '<out>', '<tls>', '--server-name', 'bad name'], 'is not a host name'],
    [['nginx', '<root>', '--out', '/tmp/with space/x', '<tls>'], 'holds characters that the server configuration would read as syntax'],
    [['nginx', '<root>', '--out', '<out>', '<tls>', '--open', '../etc'], '".." segment'],
    [['nginx', '<root>', '--out', '<out>', '<tls>', '--name', 'Depot Kit'], '--name "Depot Kit" must start'],
    [['nginx', '<prod>', '--out', '<out>', '<tls>'], `is the ${DEPOT_ROOT_DIR} folder itself`],
  ])('refuses %j: one sentence, exit 2', async (args, message) => {
    const out = outDir();
    const expanded = args.flatMap((a) =>
      a === '<tls>' ? tls() : a === '<root>' ? [fixture.root] : a === '<prod>' ? [join(fixture.root, DEPOT_ROOT_DIR)] : a === '<out>' ? [out] : [a],
    );
    const r = await runCli(['export', ...expanded]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("refuses a key that is not the certificate's before writing anything", async () => {
    const other = await issueServerCert(await createCa({ keySize: 2048 }), { dns: ['depot.test'], keySize: 2048 });
    const wrongKey = join(fixture.dir, 'wrong-key.pem');
    await writeFile(wrongKey, other.keyPem, { mode: 0o600 });
    const out = outDir();
    const r = await runCli(['export', 'nginx', fixture.root, '--out', out, '--cert', fixture.certFile, '--key', wrongKey]);
    expect(r.code).toBe(2);
    await expect(stat(out)).rejects.toThrow();
  });

  it('reads a given htpasswd file where it is (nginx, Apache, systemd) and warns nginx about bcrypt', async () => {
    const htpasswd = join(fixture.dir, 'users.htpasswd');
    await writeFile(htpasswd, `${USER}:${bcrypt.hashSync(PASSWORD, 4).replace(/^\$2b\$/, '$2y$')}\nother:${apacheMd5('x')}\n`);
    const { report, stderr } = await exportJson(['nginx', fixture.root, '--out', outDir(), ...tls(), '--htpasswd', htpasswd]);
    expect(report.reads.htpasswd).toBe(htpasswd);
    expect(report.files.map((f) => f.role)).toEqual(['site']);
    expect(await readFile(report.files[0]!.path, 'utf8')).toContain(`auth_basic_user_file "${htpasswd}";`);
    expect(stderr).toBe('');
    expect(report.warnings.join('\n')).toMatch(/nginx checks bcrypt hashes \(depot\) through the C library's crypt\(\)/);
    const apache = (await exportJson(['apache', fixture.root, '--out', outDir(), ...tls(), '--htpasswd', htpasswd])).report;
    expect(apache.warnings.join('\n')).not.toMatch(/bcrypt/);
    expect(apache.nextSteps.join('\n')).toContain(`sudo chgrp www-data ${htpasswd}`);
  });

  it('copies bcrypt users into the file a Caddyfile imports, and refuses $apr1$ for Caddy', async () => {
    const good = join(fixture.dir, 'bcrypt.htpasswd');
    const hash = bcrypt.hashSync(PASSWORD, 4).replace(/^\$2b\$/, '$2y$');
    await writeFile(good, `${USER}:${hash}\n`);
    const { report } = await exportJson(['caddy', fixture.root, '--out', outDir(), ...tls(), '--htpasswd', good, '--caddy-version', '2.6.2']);
    const users = report.files.find((f) => f.role === 'users')!;
    expect(await readFile(users.path, 'utf8')).toBe(`${USER} ${hash}\n`);
    const apr1 = join(fixture.dir, 'apr1.htpasswd');
    await writeFile(apr1, `${USER}:${apacheMd5(PASSWORD)}\n`);
    const r = await runCli(['export', 'caddy', fixture.root, '--out', outDir(), ...tls(), '--htpasswd', apr1, '--caddy-version', '2.6.2']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('holds $apr1$ hashes (depot); Caddy checks bcrypt only.');
  });

  it.each([
    ['2.6.2', 'basicauth'],
    ['2.7.6', 'basicauth'],
    ['v2.8.4', 'basic_auth'],
    ['2.10.0', 'basic_auth'],
  ])('writes the Basic auth directive Caddy %s knows: %s', async (version, directive) => {
    const { report } = await exportJson(['caddy', fixture.root, '--out', outDir(), ...tls(), ...auth(), '--caddy-version', version]);
    expect(report.caddy).toEqual({ version: version.replace(/^v/, ''), directive });
    const caddyfile = await readFile(report.files[0]!.path, 'utf8');
    expect(caddyfile).toMatch(new RegExp(`^\\t${directive} bcrypt depot \\{$`, 'm'));
  });

  it("caddy: before the reload, a step keeps Caddy's reloads from resetting the connections that wait on its old socket, across boots too", async () => {
    const { report } = await exportJson(['caddy', fixture.root, '--out', outDir(), ...tls(), ...auth(), '--caddy-version', '2.6.2']);
    const file = '/etc/sysctl.d/60-depotkit-caddy.conf';
    const sysctl = report.nextSteps.findIndex((s) => s.startsWith(`echo net.ipv4.tcp_migrate_req=1 | sudo tee ${file} && sudo sysctl -p ${file}   # `));
    expect(sysctl).toBeGreaterThan(0);
    expect(report.nextSteps[sysctl + 1]).toMatch(/^caddy validate .* && sudo systemctl reload caddy$/);
  });

  it("caddy: a folder above the certificate or key that Caddy's user cannot pass through (cert issue makes them 0700) gets a step", async () => {
    const open = await exportJson(['caddy', fixture.root, '--out', outDir(), ...tls(), ...auth(), '--caddy-version', '2.6.2']);
    expect(open.report.nextSteps.join('\n')).not.toContain('reaches the certificate and key');
    const closed = join(fixture.dir, 'closed-tls');
    await mkdir(closed, { mode: 0o700 });
    await chmod(closed, 0o700);
    await Promise.all([copyFile(fixture.certFile, join(closed, 'chain.pem')), copyFile(fixture.keyFile, join(closed, 'key.pem'))]);
    const pair = ['--cert', join(closed, 'chain.pem'), '--key', join(closed, 'key.pem')];
    const { report } = await exportJson(['caddy', fixture.root, '--out', outDir(), ...pair, ...auth(), '--caddy-version', '2.6.2']);
    expect(report.nextSteps).toContain(
      `sudo chgrp caddy ${closed} && sudo chmod g+x ${closed}   # Caddy, as its own user, reaches the certificate and key through these`,
    );
  });

  it.skipIf(!CADDY)('asks the installed caddy for its version when none is given', async () => {
    const { report } = await exportJson(['caddy', fixture.root, '--out', outDir(), ...tls(), ...auth()]);
    expect(report.caddy?.version).toMatch(/^2\.\d+/);
    expect(report.caddy?.directive).toBe(Number(report.caddy!.version!.split('.')[1]) >= 8 ? 'basic_auth' : 'basicauth');
  });

  it('without auth: warns, and writes no auth at all', async () => {
    const { report } = await exportJson(['nginx', fixture.root, '--out', outDir(), ...tls(), '--open-hcl']);
    expect(report.warnings.join('\n')).toContain('anyone who can reach the port can download the depot');
    expect(report.warnings.join('\n')).toContain('--open and --open-hcl do nothing without auth');
    expect(await readFile(report.files[0]!.path, 'utf8')).not.toContain('auth_basic');
    expect(report.files).toHaveLength(1);
  });

  it('takes the server name from the certificate unless given, and listens where told', async () => {
    const { report } = await exportJson([
      'apache',
      fixture.root,
      '--out',
      outDir(),
      ...tls(),
      ...auth(),
      '--server-name',
      'depot.lab.example',
      '--host',
      '10.0.0.5',
      '--port',
      '8443',
    ]);
    expect(report.url).toBe('https://depot.lab.example:8443');
    const vhost = await readFile(report.files[0]!.path, 'utf8');
    expect(vhost).toContain('<VirtualHost 10.0.0.5:8443>');
    expect(vhost).toContain('ServerName depot.lab.example');
    expect(report.nextSteps.join('\n')).toContain("echo 'Listen 8443' | sudo tee -a /etc/apache2/ports.conf");
  });
});
