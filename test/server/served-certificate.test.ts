import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { createCa, issueServerCert, type CaMaterial } from '../../src/cert/index.js';
import { certificateDateProblem } from '../../src/server/served-certificate.js';
import { brokenServerCert } from '../helpers/certs.js';
import { tempDir } from '../helpers/temp.js';
import { spawnServe, writeTree, type ServeChild } from './helpers.js';

const DAY = 86_400_000;

/** The status page's header, read past the certificate (an expired one is what is shown). */
function statusHeader(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', rejectUnauthorized: false, headers: { accept: 'text/html' } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve(body.slice(0, body.indexOf('</header>'))));
    });
    req.on('error', reject).end();
  });
}

describe("serve says when its certificate's dates or its key's mode are wrong", () => {
  let dir: string;
  let root: string;
  let cleanup: () => Promise<void>;
  let ca: CaMaterial;
  const children: ServeChild[] = [];
  const cert = () => join(dir, 'cert.pem');
  const key = () => join(dir, 'key.pem');

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('depotkit-served-cert-'));
    root = await writeTree(join(dir, 'web'), { [DEPOT_PATHS.catalog]: '{"patches": {}}\n' });
    ca = await createCa({ keySize: 2048 });
  });
  afterAll(async () => {
    for (const c of children) c.child.kill('SIGKILL');
    await cleanup?.();
  });

  async function serve(certPem: string, keyPem: string, keyMode: number): Promise<ServeChild> {
    await writeFile(cert(), certPem);
    await writeFile(key(), keyPem);
    // The mode of a file written again is not the one asked for on creation.
    await chmod(key(), keyMode);
    const s = await spawnServe([root, '--host', '127.0.0.1', '--port', '0', '--cert', cert(), '--key', key(), '--workers', '1']);
    children.push(s);
    return s;
  }

  it('an expired certificate and a key readable by others: at start, on reload, and at the top of the status page', async () => {
    const expired = brokenServerCert(ca, 'expired', 'localhost');
    const s = await serve(expired.certPem, expired.keyPem, 0o644);
    expect(s.stderr()).toMatch(
      /warning: The certificate served \(CN=localhost\) expired on 20\d\d-.*: the installer refuses the depot until it is renewed\. Renew it: depotkit cert renew <server-dir> --ca <ca-dir> --force/,
    );
    expect(s.stderr()).toContain(`warning: ${key()} is readable by others (mode 0644); run chmod 600 ${key()}.`);
    s.child.kill('SIGHUP');
    await s.waitForStderr(/Reloaded the certificate/);
    expect(s.stderr().match(/expired on/g)).toHaveLength(2);
    expect(s.stderr().match(/is readable by others/g)).toHaveLength(2);
    const header = await statusHeader(s.port);
    expect(header).toMatch(/class="verdict bad">✗ The certificate served \(CN=localhost\) expired on/);
    expect(header).toContain(
      `class="verdict warn">! The served certificate's private key: ${key()} is readable by others (mode 0644); run chmod 600 ${key()}.`,
    );
    // Fixed while serving: the next look (a reload) drops the banner.
    await chmod(key(), 0o600);
    s.child.kill('SIGHUP');
    await s.waitForStderr(/Reloaded the certificate[\s\S]*Reloaded the certificate/);
    expect(await statusHeader(s.port)).not.toContain('private key');
  });

  it('a certificate with 9 days left: a warning at start and a banner; one with a year left and a 0600 key: neither', async () => {
    const soon = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], days: 9, keySize: 2048 });
    const s = await serve(soon.chainPem, soon.keyPem, 0o600);
    expect(s.stderr()).toMatch(/warning: The certificate served \(CN=localhost\) expires on 20\d\d-.*, in 8 days \(fewer than 30\)/);
    expect(s.stderr()).not.toContain('is readable by');
    expect(await statusHeader(s.port)).toMatch(/class="verdict warn">! The certificate served \(CN=localhost\) expires on/);
    expect(await statusHeader(s.port)).not.toContain('private key');
    const good = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], days: 365, keySize: 2048 });
    const quiet = await serve(good.chainPem, good.keyPem, 0o600);
    expect(quiet.stderr()).not.toContain('The certificate served');
    expect(await statusHeader(quiet.port)).not.toContain('The certificate served');
  });

  it('judges the dates as check does: expired, not yet valid, within the renewal window', () => {
    const now = new Date('2030-01-10T00:00:00Z');
    const at = (days: number) => new Date(now.getTime() + days * DAY);
    const dated = (from: number, to: number) => certificateDateProblem({ subject: 'CN=x', notBefore: at(from), notAfter: at(to) }, now);
    expect(dated(-10, -1)?.severity).toBe('error');
    expect(dated(1, 100)?.message).toMatch(/is not valid before 2030-01-11/);
    expect(dated(1, 100)?.fix).toBeUndefined();
    expect(dated(-10, 29.5)?.severity).toBe('warning');
    expect(dated(-10, 31)).toBeUndefined();
  });
});
