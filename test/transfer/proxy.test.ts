import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { type AddressInfo, type Socket, connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS, PROXY_ENV } from '../../src/constants.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { startDepotServer } from '../../src/server/index.js';
import { type MirrorReport, mirrorDepot } from '../../src/transfer/mirror.js';
import { chooseProxy, noProxyEntry } from '../../src/net/index.js';
import { parseDepotUrl } from '../../src/util/depot-url.js';
import { DepotkitError, EXIT } from '../../src/util/errors.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { freePort } from '../helpers/ports.js';
import { until } from '../helpers/poll.js';
import { demo } from './helpers.js';

const TINYPROXY = ['/usr/bin/tinyproxy', '/usr/sbin/tinyproxy'].find((p) => existsSync(p));
if (!TINYPROXY) console.warn('tinyproxy is not installed (apt-get install tinyproxy-bin): the mirrors through a real proxy are skipped.');

const DEPOT_USER = 'depot';
const DEPOT_PASSWORD = 'the depot password';
// tinyproxy's configuration takes a password without spaces.
const PROXY_USER = 'alice';
const PROXY_PASSWORD = 'pr0xy-S3cret_x';
const WRONG_PASSWORD = 'not-the-Pr0xy-password';

/** A real tinyproxy on 127.0.0.1 that wants Basic credentials and opens tunnels to any port; its log as it writes it. */
interface Proxy {
  url: string;
  log: () => string;
  stop(): Promise<void>;
}

async function startTinyproxy(dir: string): Promise<Proxy> {
  const port = await freePort();
  const conf = join(dir, 'tinyproxy.conf');
  // No ConnectPort line: tunnels to every port (the depot listens on a free one). No Allow line: any client.
  await writeFile(
    conf,
    [`Port ${port}`, 'Listen 127.0.0.1', 'Timeout 30', 'LogLevel Connect', 'MaxClients 20', `BasicAuth ${PROXY_USER} ${PROXY_PASSWORD}`, ''].join('\n'),
  );
  const child: ChildProcess = spawn(TINYPROXY!, ['-d', '-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (log += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (log += d));
  const exited = new Promise((r) => child.once('exit', r));
  // It logs nothing at this level when it is ready: ready when it takes a connection.
  const accepts = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => resolve(true)).on('error', () => resolve(false));
      socket.once('connect', () => socket.destroy());
    });
  await until(accepts, `tinyproxy listening (its log: ${log})`);
  return {
    url: `http://127.0.0.1:${port}`,
    log: () => log,
    stop: async () => {
      child.kill();
      await exited;
    },
  };
}

let base: string;
let cleanup: () => Promise<void>;
let caPem: string;
let caFile: string;
let depotPasswordFile: string;
let depotUrl: string;
let depotPort: number;
let stopDepot: () => Promise<void>;
let proxy: Proxy;
/** A port nothing listens on: a proxy that is down. */
let deadProxy: string;
let n = 0;
const fresh = (name: string) => join(base, `${name}-${n++}`);
const connects = () => proxy.log().split(`CONNECT localhost:${depotPort} `).length - 1;

beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir('depotkit-proxy-'));
  const depot = await demo(join(base, 'depot'), 4 * 1024);
  const ca = await createCa({ keySize: 2048 });
  const issued = await issueServerCert(ca, { dns: ['localhost'], keySize: 2048 });
  caPem = ca.certPem;
  caFile = join(base, 'ca.pem');
  await writeFile(caFile, ca.certPem);
  depotPasswordFile = join(base, 'depot-password');
  await writeFile(depotPasswordFile, `${DEPOT_PASSWORD}\n`, { mode: 0o600 });
  const server = await startDepotServer({
    root: depot,
    host: '127.0.0.1',
    port: 0,
    tls: { certPem: issued.chainPem, keyPem: issued.keyPem },
    auth: { user: DEPOT_USER, password: DEPOT_PASSWORD },
  });
  depotUrl = server.url.replace('127.0.0.1', 'localhost');
  depotPort = Number(new URL(depotUrl).port);
  stopDepot = () => server.close();
  deadProxy = `http://127.0.0.1:${await freePort()}`;
  if (TINYPROXY) proxy = await startTinyproxy(base);
});
afterAll(async () => {
  await proxy?.stop();
  await stopDepot?.();
  await cleanup?.();
});

/** The variables the mirror reads: unset for each call but those it is given, whatever the machine running the tests has. */
const PROXY_VARIABLES = [...PROXY_ENV.https, ...PROXY_ENV.http, ...PROXY_ENV.noProxy];
/** The same for the built CLI: an empty variable is no variable. */
const NO_PROXY_VARIABLES = Object.fromEntries(PROXY_VARIABLES.map((k) => [k, '']));

/** The library's mirror of the served demo depot, with the process's proxy variables set to `env` (and only those) for the call. */
async function mirrorWith(options: Partial<Parameters<typeof mirrorDepot>[0]>, env: Record<string, string> = {}): Promise<MirrorReport> {
  const saved = Object.fromEntries(PROXY_VARIABLES.map((k) => [k, process.env[k]]));
  for (const k of PROXY_VARIABLES) delete process.env[k];
  Object.assign(process.env, env);
  try {
    return await mirrorDepot({ url: depotUrl, out: fresh('mirror'), caPems: [caPem], user: DEPOT_USER, password: DEPOT_PASSWORD, ...options });
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe.skipIf(!TINYPROXY)('depot mirror through a real proxy (tinyproxy)', () => {
  it('mirrors the served depot through the proxy it is given, with the proxy credentials; the proxy logs the tunnel to the depot', async () => {
    const before = connects();
    const report = await mirrorWith({ proxy: proxy.url, proxyUser: PROXY_USER, proxyPassword: PROXY_PASSWORD });
    expect(report.ok).toBe(true);
    expect(report.downloaded).toHaveLength(16);
    expect(report.proxy).toEqual({ url: `http://${PROXY_USER}@${proxy.url.slice('http://'.length)}`, from: 'proxy' });
    expect(connects()).toBeGreaterThan(before);
  });

  it('takes the proxy from HTTPS_PROXY, its user and password from the URL, and reports it without the password', async () => {
    const before = connects();
    const withUser = proxy.url.replace('//', `//${PROXY_USER}:${PROXY_PASSWORD}@`);
    const report = await mirrorWith({}, { HTTPS_PROXY: withUser });
    expect(report.ok).toBe(true);
    expect(report.proxy).toEqual({ url: `http://${PROXY_USER}@${proxy.url.slice('http://'.length)}`, from: 'HTTPS_PROXY' });
    expect(JSON.stringify(report)).not.toContain(PROXY_PASSWORD);
    expect(connects()).toBeGreaterThan(before);
  });

  it('goes past the proxy to a depot NO_PROXY names (the proxy named is down, so only a direct connection succeeds)', async () => {
    const report = await mirrorWith({}, { HTTPS_PROXY: deadProxy, NO_PROXY: 'example.com, localhost:' + depotPort });
    expect(report.ok).toBe(true);
    expect(report.proxy).toEqual({ url: deadProxy, from: 'HTTPS_PROXY', bypassedBy: { entry: `localhost:${depotPort}`, from: 'NO_PROXY' } });
  });

  it('says that the proxy needs credentials when none are given, before anything is written', async () => {
    const out = fresh('no-credentials');
    const err = await mirrorWith({ proxy: proxy.url, out }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DepotkitError);
    expect((err as DepotkitError).message).toBe(`The proxy ${proxy.url} needs credentials (407); nothing was sent to the depot.`);
    expect((err as DepotkitError).fix).toContain('`proxyUser`');
    expect(existsSync(join(out, DEPOT_PATHS.catalog))).toBe(false);
  });

  it('names the proxy that cannot be reached, not the depot, and shows its URL without the password', async () => {
    const err = await mirrorWith({}, { https_proxy: deadProxy.replace('//', `//${PROXY_USER}:${PROXY_PASSWORD}@`) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DepotkitError);
    expect((err as DepotkitError).exitCode).toBe(EXIT.problems);
    const message = (err as Error).message;
    expect(message).toContain(
      `the proxy http://${PROXY_USER}@${deadProxy.slice('http://'.length)} could not be reached: the connection was refused (ECONNREFUSED)`,
    );
    expect(message).not.toContain(PROXY_PASSWORD);
  });

  it('takes an http:// depot through the proxy http_proxy names (HTTPS_PROXY is for https:// depots), in a tunnel too', async () => {
    const plain = await startDepotServer({ root: join(base, 'depot'), host: '127.0.0.1', port: 0 });
    try {
      const url = plain.url.replace('127.0.0.1', 'localhost');
      const before = proxy.log().split(`CONNECT localhost:${new URL(url).port} `).length;
      const withUser = proxy.url.replace('//', `//${PROXY_USER}:${PROXY_PASSWORD}@`);
      const report = await mirrorWith({ url, user: undefined, password: undefined, caPems: undefined }, { http_proxy: withUser, HTTPS_PROXY: deadProxy });
      expect(report.ok).toBe(true);
      expect(report.proxy?.from).toBe('http_proxy');
      expect(proxy.log().split(`CONNECT localhost:${new URL(url).port} `).length).toBeGreaterThan(before);
    } finally {
      await plain.close();
    }
  });

  describe('through the command line', () => {
    it('--proxy with --proxy-credentials-file: the mirror goes through the proxy and says so, and the password is printed nowhere', async () => {
      const credentials = join(base, 'proxy-credentials');
      await writeFile(credentials, `${PROXY_USER}:${PROXY_PASSWORD}\n`, { mode: 0o600 });
      const before = connects();
      const res = await runCli(
        ['depot', 'mirror', depotUrl, '--out', fresh('cli'), '--ca', caFile, '--user', DEPOT_USER, '--password-file', depotPasswordFile].concat([
          '--proxy',
          proxy.url,
          '--proxy-credentials-file',
          credentials,
        ]),
        { env: NO_PROXY_VARIABLES },
      );
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toContain(`Through the proxy http://${PROXY_USER}@${proxy.url.slice('http://'.length)} (--proxy).`);
      expect(res.stdout + res.stderr).not.toContain(PROXY_PASSWORD);
      expect(connects()).toBeGreaterThan(before);
    });

    it('wrong proxy credentials: one sentence naming the proxy and the user, exit 1, the password printed nowhere', async () => {
      const wrong = join(base, 'wrong-proxy-password');
      await writeFile(wrong, `${WRONG_PASSWORD}\n`, { mode: 0o600 });
      const res = await runCli(
        ['depot', 'mirror', depotUrl, '--out', fresh('cli-wrong'), '--ca', caFile, '--user', DEPOT_USER, '--password-file', depotPasswordFile].concat([
          '--proxy',
          proxy.url,
          '--proxy-user',
          PROXY_USER,
          '--proxy-password-file',
          wrong,
        ]),
        { env: NO_PROXY_VARIABLES },
      );
      expect(res.code).toBe(1);
      // tinyproxy answers wrong credentials with 401 (squid with 407): the same sentence for either.
      expect(res.stderr).toMatch(
        `The proxy http://${PROXY_USER}@${proxy.url.slice('http://'.length)} refused the credentials of ${PROXY_USER} (401); nothing was sent to the depot.`,
      );
      expect(res.stderr).toContain('--proxy-user');
      expect(res.stdout + res.stderr).not.toContain(WRONG_PASSWORD);
    });
  });
});

describe('depot mirror --proxy on the command line', () => {
  it('refuses a password in the proxy URL, without printing it', async () => {
    const res = await runCli([
      'depot',
      'mirror',
      'https://localhost:1',
      '--out',
      fresh('refused'),
      '--proxy',
      `http://${PROXY_USER}:${PROXY_PASSWORD}@127.0.0.1:3128`,
    ]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--proxy holds a password');
    expect(res.stdout + res.stderr).not.toContain(PROXY_PASSWORD);
  });
});

describe('which proxy, as curl reads the environment', () => {
  const https = parseDepotUrl('https://depot.lab.local:8443').url;
  const http = parseDepotUrl('http://depot.lab.local').url;
  const env = (e: Record<string, string>) => e;

  it('https_proxy before HTTPS_PROXY for https://; http_proxy or HTTP_PROXY only for http://; the option before both; "" for none', () => {
    expect(chooseProxy(https, {}, env({ HTTPS_PROXY: 'http://a:1', https_proxy: 'http://b:2' })).use).toEqual({ url: 'http://b:2', from: 'https_proxy' });
    expect(chooseProxy(https, {}, env({ HTTP_PROXY: 'http://a:1', http_proxy: 'http://b:2' })).use).toBeUndefined();
    expect(chooseProxy(http, {}, env({ HTTP_PROXY: 'http://a:1' })).use).toEqual({ url: 'http://a:1', from: 'HTTP_PROXY' });
    expect(chooseProxy(https, { proxy: 'proxy.lab.local:3128' }, env({ HTTPS_PROXY: 'http://a:1' })).use).toEqual({
      url: 'http://proxy.lab.local:3128',
      from: 'proxy',
    });
    expect(chooseProxy(https, { proxy: '' }, env({ HTTPS_PROXY: 'http://a:1' }))).toEqual({});
  });

  it('NO_PROXY sends the depot past any proxy, the one given too; `noProxy` stands instead of it', () => {
    expect(chooseProxy(https, { proxy: 'http://p:1' }, env({ no_proxy: 'lab.local' }))).toEqual({
      use: { url: 'http://p:1', from: 'proxy', bypassedBy: { entry: 'lab.local', from: 'no_proxy' } },
    });
    expect(chooseProxy(https, { noProxy: '' }, env({ HTTPS_PROXY: 'http://p:1', NO_PROXY: '*' })).route?.shown).toBe('http://p:1');
    expect(chooseProxy(https, { noProxy: 'depot.lab.local:8443' }, env({ HTTPS_PROXY: 'http://p:1' })).use?.bypassedBy).toEqual({
      entry: 'depot.lab.local:8443',
      from: 'noProxy',
    });
  });

  it('the proxy user given wins over the one in the URL; the password is in the authorization only', () => {
    const { route } = chooseProxy(https, { proxyUser: 'bob', proxyPassword: 'p' }, env({ HTTPS_PROXY: 'http://alice:secret@proxy:3128' }));
    expect(route?.shown).toBe('http://bob@proxy:3128');
    expect(route?.uri.href).toBe('http://proxy:3128/');
    expect(route?.authorization).toBe(`Basic ${Buffer.from('bob:p').toString('base64')}`);
  });

  it('refuses a SOCKS proxy and a value that is not a URL, without showing a password', () => {
    expect(() => chooseProxy(https, { proxy: 'socks5://proxy:1080' })).toThrow(
      /socks5 proxy; a depot is mirrored through an http:\/\/ or https:\/\/ proxy only/,
    );
    let message = '';
    try {
      chooseProxy(https, {}, env({ HTTPS_PROXY: 'http://alice:secret@[bad' }));
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('The proxy in HTTPS_PROXY is not a URL: "http://***@[bad"');
  });

  it.each([
    ['*', 'depot.lab.local', 443, '*'],
    ['example.com,*', 'depot.lab.local', 443, undefined],
    ['lab.local', 'depot.lab.local', 443, 'lab.local'],
    ['.lab.local', 'lab.local', 443, '.lab.local'],
    ['*.lab.local', 'depot.lab.local', 443, '*.lab.local'],
    ['ab.local', 'depot.lab.local', 443, undefined],
    ['DEPOT.LAB.LOCAL', 'depot.lab.local', 443, 'DEPOT.LAB.LOCAL'],
    ['other depot.lab.local:8443', 'depot.lab.local', 8443, 'depot.lab.local:8443'],
    ['depot.lab.local:8443', 'depot.lab.local', 443, undefined],
    ['10.0.0.0/8', '10.1.2.3', 443, '10.0.0.0/8'],
    ['0.0.1', '10.0.0.1', 443, undefined],
    ['10.1.2.3:443', '10.1.2.3', 443, '10.1.2.3:443'],
    ['[fd00::1]:443', 'fd00::1', 443, '[fd00::1]:443'],
    ['fd00::/8', 'fd00::1', 443, 'fd00::/8'],
    ['fd00:0::1', 'fd00::1', 443, 'fd00:0::1'],
    ['lab.local', '10.1.2.3', 443, undefined],
  ])('NO_PROXY=%s for %s:%i -> %s', (list, host, port, entry) => {
    expect(noProxyEntry(list, { host, port, isIp: /^[\d.]+$|:/.test(host) })).toBe(entry);
  });
});

describe('what a proxy refuses, in one sentence', () => {
  /** A proxy of the test's own that answers every CONNECT with `status` and its headers. */
  async function refusingProxy(status: number, headers: Record<string, string>): Promise<{ url: string; close(): Promise<void> }> {
    const server = createServer();
    server.on('connect', (_req, socket: Socket) => {
      const lines = [`HTTP/1.1 ${status} Refused`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), 'Content-Length: 0', '', ''];
      socket.end(lines.join('\r\n'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise((r) => server.close(() => r())),
    };
  }

  it.each([
    [407, { 'Proxy-Authenticate': 'NTLM' }, 'asks for NTLM authentication (407); depotkit gives a proxy Basic credentials only.'],
    [403, {}, `refused to open a connection to localhost:1 (it answered 403); nothing was sent to the depot.`],
  ])('a CONNECT answered %i %j', async (status, headers, words) => {
    const refusing = await refusingProxy(status, headers);
    try {
      const err = await mirrorWith({ url: 'https://localhost:1', proxy: refusing.url, proxyUser: PROXY_USER, proxyPassword: PROXY_PASSWORD }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DepotkitError);
      expect((err as Error).message).toBe(`The proxy http://${PROXY_USER}@${refusing.url.slice('http://'.length)} ${words}`);
    } finally {
      await refusing.close();
    }
  });
});
