import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { runMain } from '../cli/in-process.js';
import { PASSWORD, USER, fixtureForFile } from './helpers.js';

// What only the command line does: the JSON and text it prints, the password read from its file, and the
// refusals of its arguments. What exportConfig writes and refuses is export.test.ts.
const fixture = fixtureForFile();
const outDir = fixture.outDir;
const tls = () => ['--cert', fixture.certFile, '--key', fixture.keyFile];
const auth = () => ['--user', USER, '--password-file', fixture.passwordFile];

describe('depotkit export (the built CLI)', () => {
  it('prints the report as JSON in the command line words, and the password nowhere', async () => {
    const out = outDir();
    const r = await runCli(['export', 'nginx', fixture.root, '--out', out, ...tls(), ...auth(), '--open-hcl', '--json']);
    expect(r.code, r.stderr).toBe(0);
    // With --json the warnings are in the report, not on stderr.
    expect(r.stderr).toBe('');
    const report = JSON.parse(r.stdout) as { target: string; open: string[]; check: string; nextSteps: string[] };
    expect(report).toMatchObject({ target: 'nginx', open: ['PROD/vsan/hcl'] });
    expect(report.check).toBe(
      `depotkit check https://depot.test --ca <the CA certificate the installer trusts> --user ${USER} --password-file <${USER}'s password file>`,
    );
    const written = await Promise.all((await readdir(out)).map((name) => readFile(join(out, name), 'utf8')));
    expect(`${r.stdout}${r.stderr}${written.join('\n')}`).not.toContain(PASSWORD);
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

  // The built CLI for the first two (a target the library refuses, a password it cannot ask for); the CLI's
  // main in this process for the others, one at a time (each captures this process's output).
  it.each([
    [['iis', '<root>', '--out', '<out>', '<tls>'], '"iis" is not a server depotkit exports for'],
    [['nginx', '<root>', '--out', '<out>', '--ca', '/tmp'], '--ca is for the systemd export only.'],
    [['apache', '<root>', '--out', '<out>', '<tls>', '--workers', '2'], '--workers is for the systemd export only.'],
    [['nginx', '<root>', '--out', '<out>', '<tls>', '--caddy-version', '2.8'], '--caddy-version is for the caddy export only.'],
    [['nginx', '<root>', '--out', '<out>', '<tls>', '--user', USER], `The password of depot user ${USER} is needed and there is no terminal to ask on.`],
    [['nginx', '<root>', '--out', '<out>', '<tls>', '--password-env', 'X'], '--password-env needs --user'],
    [['nginx', '<root>', '--out', '<out>', '<tls>', '--name', 'Depot Kit'], '--name "Depot Kit" must start'],
  ])('refuses %j: one sentence, exit 2', async (args, message) => {
    const out = outDir();
    const expanded = args.flatMap((a) => (a === '<tls>' ? tls() : a === '<root>' ? [fixture.root] : a === '<out>' ? [out] : [a]));
    const built = args[0] === 'iis' || args.includes('--user');
    const r = await (built ? runCli : runMain)(['export', ...expanded]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
