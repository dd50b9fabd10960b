import { writeFile } from 'node:fs/promises';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate, type ServedCertificate } from '../../src/simulators/vcenter/certs.js';
import { chooseProxy } from '../../src/net/index.js';
import { parseDepotUrl } from '../../src/util/depot-url.js';
import { DepotkitError } from '../../src/util/errors.js';
import { forgetSecrets, registerSecret, scrubSecrets } from '../../src/util/scrub.js';
import { runCli } from '../helpers/cli.js';
import { useTempDir } from '../helpers/temp.js';

/** The secrets a hostile consumer repeats in every string it answers. */
const CONSUMER_PASSWORD = 'Cons-umer/Pa55?w#rd';
const DEPOT_PASSWORD = 'Dep0t-Secret';
const ACCESS_TOKEN = 'acc3ss-T0ken-of-the-consumer';
const REFRESH_ID = 'refr3sh-Id-of-the-consumer';
const SECRETS = [CONSUMER_PASSWORD, DEPOT_PASSWORD, ACCESS_TOKEN, REFRESH_ID];

/** No secret, in any of the forms a URL or JSON spells it, and no part of one 5 characters long or more. */
function expectNoSecret(text: string): void {
  for (const secret of SECRETS) {
    for (const form of [secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]) expect(text).not.toContain(form);
    for (const part of secret.split(/[/?#-]/).filter((p) => p.length >= 5)) expect(text).not.toContain(part);
  }
}

/** What the consumer says, with every secret it was given or gave. */
const echo = (what: string) =>
  `${what}: Login to depot with password ${DEPOT_PASSWORD} failed; credentials depot/${DEPOT_PASSWORD} refused; ` +
  `https://depot:${DEPOT_PASSWORD}@depot.lab.local/ admin password ${CONSUMER_PASSWORD}, token ${ACCESS_TOKEN} ${REFRESH_ID}`;

/**
 * An installer that echoes the secrets it knows in every message, remediation,
 * account message and URL it answers; it refuses the depot settings.
 */
function hostileConsumer(cert: ServedCertificate): Promise<{ url: string; close(): Promise<void> }> {
  const account = { username: 'depot', password: DEPOT_PASSWORD, status: 'DEPOT_INVALID_CREDENTIAL', message: echo('account') };
  const settings = { offlineAccount: account, depotConfiguration: { isOfflineDepot: true, hostname: '127.0.0.1', port: 1 } };
  const answers: Record<string, [number, unknown]> = {
    'POST /v1/tokens': [201, { accessToken: ACCESS_TOKEN, refreshToken: { id: REFRESH_ID } }],
    'GET /v1/system/appliance-info': [200, { role: 'VCF_INSTALLER', version: '9.0.0.0' }],
    'GET /v1/system/settings/depot': [200, settings],
    'PUT /v1/system/settings/depot': [
      400,
      { errorCode: 'DEPOT_INVALID_CREDENTIAL', message: echo('message'), remediationMessage: echo('remediation'), arguments: [], causes: [] },
    ],
    'GET /v1/system/settings/depot/depot-sync-info': [200, { syncStatus: 'SYNC_FAILED', errorMessage: echo('sync') }],
    'GET /v1/bundles/download-status': [200, { elements: [{ bundleId: 'b1', componentType: 'SDDC', downloadStatus: 'FAILED', message: echo('download') }] }],
    'GET /v1/sddc-manager/trusted-certificates': [200, { elements: [] }],
  };
  const server: Server = createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    req.resume();
    const [status, body] = answers[`${req.method} ${req.url?.split('?')[0]}`] ?? [404, { errorCode: 'NOT_FOUND', message: echo('not found') }];
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
      }),
    ),
  );
}

const tmp = useTempDir('depotkit-printed-secrets-');
let cert: ServedCertificate;
let certFile: string;
let consumerPasswordFile: string;
let depotPasswordFile: string;

beforeAll(async () => {
  cert = await selfSignedCertificate('127.0.0.1', '127.0.0.1');
  certFile = join(tmp.dir, 'consumer.pem');
  await writeFile(certFile, cert.certPem);
  consumerPasswordFile = join(tmp.dir, 'consumer-password');
  await writeFile(consumerPasswordFile, `${CONSUMER_PASSWORD}\n`, { mode: 0o600 });
  depotPasswordFile = join(tmp.dir, 'depot-password');
  await writeFile(depotPasswordFile, `${DEPOT_PASSWORD}\n`, { mode: 0o600 });
});

describe('a consumer that echoes every secret it knows', () => {
  const consumerFlags = () => ['--user', 'admin@local', '--password-file', consumerPasswordFile, '--installer-ca', certFile];

  it.each([false, true])('installer connect-depot (json %s): the refusal is reported, no secret is printed', async (json) => {
    const consumer = await hostileConsumer(cert);
    try {
      const res = await runCli([
        'installer',
        'connect-depot',
        '--installer',
        consumer.url,
        ...consumerFlags(),
        '--depot-url',
        'https://127.0.0.1:1',
        '--depot-user',
        'depot',
        '--depot-password-file',
        depotPasswordFile,
        ...(json ? ['--json'] : []),
      ]);
      expect(res.code, res.stderr).toBe(1);
      expectNoSecret(res.stdout + res.stderr);
      if (json) {
        const row = (JSON.parse(res.stdout) as { installers: Array<{ result: { status: string; message: string; fix: string } }> }).installers[0]!;
        expect(row.result.status).toBe('DEPOT_INVALID_CREDENTIAL');
        expect(row.result.message).toContain(
          'message: Login to depot with password *** failed; credentials depot/*** refused; https://depot:***@depot.lab.local/',
        );
        expect(row.result.fix).toContain('admin password ***, token *** ***');
      } else {
        expect(res.stdout).toContain('DEPOT_INVALID_CREDENTIAL: message: Login to depot with password *** failed');
        expect(res.stdout).toContain('remediation: Login to depot with password *** failed');
      }
    } finally {
      await consumer.close();
    }
  });

  it.each([false, true])('installer status (json %s): the account message, the sync, the downloads are shown without a secret', async (json) => {
    const consumer = await hostileConsumer(cert);
    try {
      // Status is not told the depot's password: the consumer's answer holds it, and it is hidden as the consumer's own.
      const res = await runCli(['installer', 'status', '--installer', consumer.url, ...consumerFlags(), ...(json ? ['--json'] : [])]);
      expect(res.code, res.stderr).toBe(0);
      expectNoSecret(res.stdout + res.stderr);
      expect(res.stdout).toContain('account: Login to depot with password *** failed');
      expect(res.stdout).toContain('sync: Login to depot with password *** failed');
      expect(res.stdout).toContain('download: Login to depot with password *** failed');
      expect(res.stdout).toContain('https://depot:***@depot.lab.local/ admin password ***, token *** ***');
    } finally {
      await consumer.close();
    }
  });
});

describe('the scrub', () => {
  it('hides a registered secret as given, URL-encoded and JSON-escaped, and the password of any URL', () => {
    registerSecret('Sc"rub/Me-Now');
    expect(scrubSecrets('a Sc"rub/Me-Now b Sc%22rub%2FMe-Now c Sc\\"rub/Me-Now')).toBe('a *** b *** c ***');
    expect(scrubSecrets('see https://u:not-registered/x@host/p and http://alice@proxy:3128')).toBe('see https://u:***@host/p and http://alice@proxy:3128');
    // A short one as a whole word only: a weak password must not garble the command lines printed.
    registerSecret('depot');
    expect(scrubSecrets('credentials depot/depot refused: run npx depotkit check')).toBe('credentials ***/*** refused: run npx depotkit check');
    // Too short to look for: hiding every "ab" would garble the text.
    registerSecret('ab');
    expect(scrubSecrets('abc ab')).toBe('abc ab');
  });
});

describe('a proxy password, whatever it holds', () => {
  const depot = parseDepotUrl('https://depot.lab.local').url;
  const refusal = (value: string): string => {
    try {
      chooseProxy(depot, {}, { HTTPS_PROXY: value });
    } catch (err) {
      expect(err).toBeInstanceOf(DepotkitError);
      return (err as Error).message;
    }
    throw new Error(`${value} was taken`);
  };

  it.each(['http://puser:PROXY/S3cret@host:3128', 'puser:PROXY/S3cret@host:3128', 'http://puser:PROXY/S3c@ret@host:3128'])(
    '%s: not a URL, shown without any of its credentials',
    (value) => {
      const message = refusal(value);
      expect(message).toMatch(/^The proxy in HTTPS_PROXY is not a URL: "(http:\/\/)?\*\*\*@host:3128"\.$/);
      expect(message).not.toMatch(/puser|PROXY\/|S3c|ret@/);
    },
  );

  it('a password whose part before a / reads as a port: refused, not taken for the host', () => {
    const message = refusal('http://puser:3128/S3cret@host:3128');
    expect(message).toBe('The proxy in HTTPS_PROXY has an `@` after its host: a user or password holding /, ? or # must be %-encoded: "http://***@host:3128".');
  });

  it('a bad %-escape: one clear sentence, without the password', () => {
    const message = refusal('http://puser:50%zzS3cret@host:3128');
    expect(message).toBe('The proxy in HTTPS_PROXY has a % in its user or password that starts no %-escape (two hex digits): "http://***@host:3128".');
    // Encoded, the same password is taken.
    expect(chooseProxy(depot, {}, { HTTPS_PROXY: 'http://puser:50%25zz%2FS3cret@host:3128' }).route?.shown).toBe('http://puser@host:3128');
  });

  it('depot mirror refuses --proxy with a password holding a /, and prints no part of it', async () => {
    const res = await runCli([
      'depot',
      'mirror',
      'https://depot.lab.local',
      '--out',
      join(tmp.dir, 'mirror'),
      '--proxy',
      'http://puser:PROXY/S3cret@host:3128',
    ]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--proxy holds a password/);
    expect(res.stderr).not.toMatch(/PROXY|S3cret/);
  });
});

describe('forgetting the secrets of an earlier job', () => {
  it('a weak password registered before is hidden until forgotten, and the words are whole again after', () => {
    registerSecret('depot');
    expect(scrubSecrets('Give the depot with --depot-url')).toBe('Give the *** with --***-url');
    forgetSecrets();
    expect(scrubSecrets('Give the depot with --depot-url')).toBe('Give the depot with --depot-url');
    expect(scrubSecrets('https://user:pw@example.test/')).toBe('https://user:***@example.test/');
  });
});
