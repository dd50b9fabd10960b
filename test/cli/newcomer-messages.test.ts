import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusData, renderStatusPage } from '../../src/server/index.js';
import { runCli, spawnCliJson } from '../helpers/cli.js';
import { pooledKeyPem } from '../helpers/key-pool.js';
import { tempDir } from '../helpers/temp.js';
import { checkDepot } from '../../src/check/check.js';
import { makeFixture, withoutNpm, type CliFixture } from './fixtures.js';
import { runMain } from './in-process.js';

/** What a newcomer reads when a step goes wrong: sentences that name the fix, in depotkit's words. */
describe('messages a newcomer meets', () => {
  let f: CliFixture;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    const t = await tempDir('depotkit-newcomer-');
    cleanup = t.cleanup;
    f = await makeFixture(t.dir);
  });
  afterAll(() => cleanup());
  const run = (args: string[]) => runCli(args, { env: withoutNpm() });
  // The CLI's main in this process, for refusals made before any work; the built CLI runs one per command below.
  const main = (args: string[]) => runMain(args, withoutNpm());

  it('an empty password file is named as such, in one plain sentence', async () => {
    const empty = join(f.dir, 'empty.pass');
    await writeFile(empty, '', { mode: 0o600 });
    const r = await run(['check', 'https://127.0.0.1:9', '--user', 'depot', '--password-file', empty]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`depotkit: ${empty} is empty: its first line should hold the password of depot user depot.`);
  });

  it('--dns with an address names --ip', async () => {
    const r = await main(['cert', 'issue', '--ca', f.caDir, '--dns', '10.0.0.5', '--out', join(f.dir, 'x')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('"10.0.0.5" is an IP address, not a DNS name: give it with --ip 10.0.0.5.');
  });

  it('a depot URL without its scheme is shown with https:// in front', async () => {
    const r = await main(['check', 'depot.lab.local:8443']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('The depot URL must start with https:// (e.g. https://depot.lab.local:8443).');
  });

  it('the /PROD fix of a check by address gives the installer the name of --as-host, not the address', async () => {
    // The finding and its fix are checkDepot's; the command passes --as-host on as asHost.
    const { findings } = await checkDepot('https://127.0.0.1:9/PROD', { asHost: 'depot.lab.local', timeoutMs: 2000 });
    expect(findings.find((x) => x.id === 'url.ends-with-prod')?.fix).toContain('Give the installer https://depot.lab.local:9 ');
  });

  it('a usage error found by the library ends with the command usage line, as a parse error does', async () => {
    const r = await run(['export', 'nginx', f.depot, '--out', join(f.dir, 'nginx'), '--cert', f.chainFile]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--cert and --key go together\.\nusage: depotkit export \[options\] <server> <depot-dir>\n/);
    const noName = await main(['cert', 'issue', '--ca', f.caDir, '--out', join(f.dir, 'y')]);
    expect(noName.stderr).toMatch(/usage: depotkit cert issue \[options\]/);
  });

  it('a key that is not the certificate names both files', async () => {
    const otherKey = join(f.dir, 'other-key.pem');
    // The pool hands its keys out in turn: the next one is not the fixture's.
    await writeFile(otherKey, pooledKeyPem(2048));
    const r = await main(['export', 'nginx', f.depot, '--out', join(f.dir, 'nginx2'), '--cert', f.chainFile, '--key', otherKey]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`The key file ${otherKey} does not belong to the certificate file ${f.chainFile}: they are not a pair.`);
  });

  it('cert inspect of a private key says it is one and never shows it', async () => {
    const r = await run(['cert', 'inspect', f.keyFile]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${f.keyFile} is a private key (PRIVATE KEY), not a certificate; its content is not shown.`);
    const key = await readFile(f.keyFile, 'utf8');
    expect(r.stderr + r.stdout).not.toContain(key.split('\n')[1]!);
  });

  it('serve warns when its certificate is a CA certificate', async () => {
    const serve = await spawnCliJson<{ url: string }>(
      [
        'serve',
        f.depot,
        '--host',
        '127.0.0.1',
        '--port',
        '0',
        '--workers',
        '1',
        '--cert',
        join(f.caDir, 'ca-cert.pem'),
        '--key',
        join(f.caDir, 'ca-key.pem'),
        '--json',
      ],
      { env: withoutNpm() },
    );
    try {
      expect(serve.stderr()).toContain('is a CA certificate (CA:TRUE), not a server certificate: issue one from that CA with depotkit cert issue');
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });

  it('the status page of an open depot asks for no password file', async () => {
    const certPem = await readFile(f.chainFile, 'utf8');
    const open = renderStatusPage(await statusData(f.depot, { certPem, url: 'https://depot.lab.local:8443' }));
    expect(open).not.toContain('depot.pass');
    expect(open).toContain('Put the CA certificate in <code>depot-ca.pem</code>, then:');
    const closed = renderStatusPage(await statusData(f.depot, { certPem, url: 'https://depot.lab.local:8443', auth: { user: 'depot' } }));
    expect(closed).toContain("Put the depot user's password on the first line of <code>depot.pass</code> and the CA certificate");
  });
});
