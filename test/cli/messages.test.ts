import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_ROOT_DIR } from '../../src/constants.js';
import { createCa, writeCaDir } from '../../src/cert/index.js';
import { issueCert } from '../../src/cert/issue-dir.js';
import { checkDepot } from '../../src/check/check.js';
import { verifyDepot } from '../../src/depot/verify.js';
import { exportConfig } from '../../src/export/index.js';
import { startDepotServer, type DepotServer } from '../../src/server/index.js';
import { startInstallerSimulator } from '../../src/simulators/installer/index.js';
import { startMgmtSimulator } from '../../src/simulators/vcenter/index.js';
import { packDepot } from '../../src/transfer/pack.js';
import { listenOn } from '../../src/util/listen.js';
import { runCli } from '../helpers/cli.js';
import { refusal } from '../helpers/output.js';
import { runMain } from './in-process.js';
import { onTheCommandLine } from '../check/words.js';
import { DEPOT_PASSWORD, DEPOT_USER, useServedFixture, withoutNpm, type CliFixture } from './fixtures.js';

/** One sentence (and at most a hint line), exit 2, no stack: from the built CLI, or a library refusal as printError shows it. */
function expectOneSentence(r: { code: number; stderr: string }, pattern: RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toMatch(pattern);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(
    r.stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('depotkit:')),
  ).toHaveLength(1);
}

describe('messages that say what is wrong', () => {
  const served = useServedFixture('depotkit-cli-messages-');
  let f: CliFixture;
  let server: DepotServer;
  let busy: Server;
  let busyPort: number;
  beforeAll(async () => {
    f = served.fixture();
    server = served.server();
    busy = createServer();
    await listenOn(busy, 0, '127.0.0.1');
    busyPort = (busy.address() as { port: number }).port;
  });
  afterAll(() => busy?.close());

  const run = (args: string[], cwd?: string) => runCli(args, { env: withoutNpm(), cwd });
  /** The CLI's main in this process, for commands the built CLI runs elsewhere in this file or its neighbours. */
  const main = (args: string[]) => runMain(args, withoutNpm());

  it('an --out that is a file, with --force: says it is a file instead of asking for --force again', async () => {
    const file = join(f.dir, 'a-file');
    await writeFile(file, 'not a folder\n');
    // The command line once; cert issue and depot pack refuse in their libraries, in the same words.
    const ca = await run(['cert', 'ca', '--out', file, '--key-size', '2048', '--force']);
    const issue = await refusal(issueCert(file, { caDir: f.caDir, dns: ['depot.lab'], keySize: 2048, force: true }));
    const pack = await refusal(packDepot({ depot: f.depot, out: file, volumeSize: 1024 ** 3, force: true }));
    for (const r of [ca, issue, pack]) {
      expectOneSentence(r, new RegExp(`${file} is a file, not a folder\\.`));
      expect(r.stderr).not.toContain('force');
    }
  });

  it('a busy port is one sentence and exit 2 for serve and both simulators', async () => {
    const serve = await run(['serve', f.depot, '--http', '--host', '127.0.0.1', '--port', String(busyPort)]);
    expectOneSentence(serve, new RegExp(`Port ${busyPort} on 127\\.0\\.0\\.1 is already in use\\.\\n {2}Pick another with --port`));
    // The simulators refuse in their libraries, which `sim mgmt` and `sim installer` call with --port as given.
    const mgmt = await refusal(startMgmtSimulator({ host: '127.0.0.1', port: busyPort }));
    expectOneSentence(mgmt, new RegExp(`Port ${busyPort} on 127\\.0\\.0\\.1 is already in use\\.`));
    const installer = await refusal(startInstallerSimulator({ host: '127.0.0.1', port: busyPort }));
    expectOneSentence(installer, new RegExp(`Port ${busyPort} on 127\\.0\\.0\\.1 is already in use\\.`));
  });

  it('installer commands read a --password-file given on the command line first: a missing one is exit 2, not a FAILED row', async () => {
    const r = await main([
      'installer',
      'depot',
      '--installer',
      'https://127.0.0.1:1',
      '--password-file',
      join(f.dir, 'nope'),
      '--depot-url',
      'https://depot.lab',
    ]);
    expectOneSentence(r, /nope does not exist\./);
    expect(r.stdout).toBe('');
  });

  it("check: http:// on a TLS port is the URL's fault; an unknown host points at --as-host; counts are singular for one", async () => {
    const http = await run(['check', server.url.replace('https:', 'http:')]);
    expect(http.code).toBe(1);
    expect(http.stdout).toContain(`ERROR http.tls-port: 127.0.0.1:${server.port} speaks TLS: use https://.`);
    expect(http.stdout).toContain(`fix: Give the depot as https://127.0.0.1:${server.port}, here and to the installer.`);
    expect(http.stdout).toContain('REJECT: the installer would not accept this depot (1 error, 0 warnings).');
    // The finding is the library's; its fix as the command line prints it.
    const unknown = (await checkDepot('https://depot.invalid')).findings.find((x) => x.id === 'net.unknown-host')!;
    expect(unknown.message).toMatch(/^depot\.invalid does not resolve/);
    expect(onTheCommandLine(`${unknown.message} ${unknown.fix ?? ''}`)).toContain('--as-host depot.invalid');
  });

  it('check --timeout is in seconds', async () => {
    // Accepts the connection and never answers the TLS handshake.
    const silent = createServer(() => undefined);
    await listenOn(silent, 0, '127.0.0.1');
    try {
      const r = await run(['check', `https://127.0.0.1:${(silent.address() as { port: number }).port}`, '--timeout', '1', '--json']);
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout).findings[0].message).toContain('timed out after 1000 ms');
    } finally {
      silent.close();
    }
  });

  it('a certificate and key given the wrong way round are called swapped (serve, export, mgmt), not "no start line"', async () => {
    const serve = await run(['serve', f.depot, '--cert', f.keyFile, '--key', f.chainFile, '--port', '0']);
    expectOneSentence(
      serve,
      /The certificate and the key are swapped: the certificate file .*server-key\.pem holds a private key and the key file .*server-chain\.pem a certificate/,
    );
    const exported = await refusal(exportConfig({ target: 'nginx', root: f.depot, out: join(f.dir, 'nginx'), cert: f.keyFile, key: f.chainFile }));
    expectOneSentence(exported, /are swapped/);
    const mgmt = await main([
      'mgmt',
      'replace-cert',
      '--server',
      'https://127.0.0.1:1',
      '--password-file',
      f.passwordFile,
      '--ca',
      join(f.caDir, 'ca-cert.pem'),
      '--cert',
      f.keyFile,
      '--key',
      f.chainFile,
    ]);
    expectOneSentence(
      mgmt,
      /The certificate and the key are swapped: --cert .*server-key\.pem holds a private key and --key .*server-chain\.pem a certificate/,
    );
    expect(`${serve.stderr}${exported.stderr}${mgmt.stderr}`).not.toContain('no start line');
  });

  it('a CA certificate file where a CA must sign names the folder it is in', async () => {
    const caCert = join(f.caDir, 'ca-cert.pem');
    const hint = new RegExp(
      `--ca ${caCert} is a file; signing needs the CA folder, which holds the CA's key\\.\\n {2}Give the folder it is in: --ca ${f.caDir}\\n`,
    );
    expectOneSentence(await run(['cert', 'issue', '--ca', caCert, '--dns', 'depot.lab', '--out', join(f.dir, 'issued')]), hint);
    expectOneSentence(await run(['serve', f.depot, '--ca', caCert, '--port', '0']), hint);
    expectOneSentence(await main(['mgmt', 'replace-cert', '--server', 'https://127.0.0.1:1', '--password-file', f.passwordFile, '--ca', caCert]), hint);
  });

  it('two CAs with the same name are told apart by fingerprint', async () => {
    // Made with the same default CN as the fixture's CA.
    const other = await createCa({ keySize: 2048 });
    const otherDir = join(f.dir, 'other-ca');
    await writeCaDir(otherDir, other);
    const r = await run(['cert', 'inspect', f.chainFile, '--ca', otherDir, '--json']);
    expect(r.code).toBe(1);
    const finding = JSON.parse(r.stdout).findings.find((x: { id: string }) => x.id === 'cert.chain.untrusted');
    const { X509Certificate } = await import('node:crypto');
    expect(finding.message).toContain(`but not by the given CA of that name (SHA-256 ${new X509Certificate(other.certPem).fingerprint256})`);
    expect(finding.message).toContain('two CAs share the name');
  });

  it('depot verify: a misspelt folder gets one fix, and so does a misspelt PROD', async () => {
    const typo = await run(['depot', 'verify', join(f.dir, 'depoy')]);
    expectOneSentence(typo, new RegExp(`${join(f.dir, 'depoy')} does not exist\\.\\n {2}Did you mean ${f.depot}\\?\\n$`));
    const nowhere = await refusal(verifyDepot(join(f.dir, 'elsewhere')));
    expectOneSentence(nowhere, /elsewhere does not exist\.\n {2}Give the depot root: the folder that contains PROD\/\.\n$/);
    const lower = join(f.dir, 'lower');
    await mkdir(join(lower, 'prod'), { recursive: true });
    const misspelt = await run(['depot', 'verify', lower]);
    expect(misspelt.code).toBe(1);
    expect(misspelt.stdout).toContain(
      `fix: Rename ${join(lower, 'prod')} to ${join(lower, DEPOT_ROOT_DIR)}: the installer asks for /${DEPOT_ROOT_DIR}/ exactly.`,
    );
    expect(misspelt.stdout).toContain('FAILED');
    expect(misspelt.stdout).toContain('1 error, 0 warnings.');
  });

  it('startDepotServer refuses Basic auth over plain HTTP itself', async () => {
    await expect(startDepotServer({ root: f.depot, auth: { user: DEPOT_USER, password: DEPOT_PASSWORD } })).rejects.toThrow(
      'Basic auth over plain HTTP would send the password in clear text.',
    );
  });

  it('start --no-serve hints only at files that exist; npm start verifies its own signature and names another port when its own is taken', async () => {
    const cwd = join(f.dir, 'start');
    await mkdir(cwd);
    const first = await run(['start', '--no-serve'], cwd);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('info  signature.valid');
    expect(first.stdout).not.toContain('signature.unverified');
    expect(first.stdout).toContain('Serve it: depotkit quickstart (makes a CA, a server certificate and a password in ./demo-pki first).');
    expect(first.stdout).not.toContain('--password-file');
    // As npm start runs it, on a port that is taken: the demo PKI is made, then the port is refused.
    const npmStart = { ...withoutNpm(), npm_lifecycle_event: 'start', npm_package_name: 'depotkit', npm_lifecycle_script: 'node dist/cli/main.js start' };
    const taken = await runCli(['start', '--port', String(busyPort)], { cwd, env: npmStart });
    expectOneSentence(
      taken,
      new RegExp(
        `Port ${busyPort} on 127\\.0\\.0\\.1 is already in use\\.\\n {2}Pick another port: npm start -- --port 9443, or npm start -- --port 0 for any free one\\.`,
      ),
    );
    // Now the PKI and password exist: the hint names them.
    const again = await run(['start', '--no-serve'], cwd);
    expect(again.stdout).toContain(
      'Serve it: depotkit quickstart, or: depotkit serve demo-depot --ca demo-pki/ca --user depot --password-file demo-pki/depot-password',
    );
  });
});
