import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificateCoversHost } from '../../src/cert/index.js';
import { tempDir } from '../helpers/temp.js';

const run = promisify(execFile);

/** A self-signed certificate made by openssl with exactly these SAN entries (none: CN only). */
async function certWith(dir: string, name: string, san: string | undefined): Promise<string> {
  const out = join(dir, `${name}.pem`);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    join(dir, `${name}.key`),
    '-out',
    out,
    '-days',
    '1',
    '-subj',
    '/CN=depot.lab.local',
    ...(san ? ['-addext', `subjectAltName=${san}`] : []),
  ]);
  return readFile(out, 'utf8');
}

let tmp: { dir: string; cleanup: () => Promise<void> };
const certs = new Map<string, string>();
const SANS = {
  exact: 'DNS:depot.lab.local',
  wildcard: 'DNS:*.lab.local',
  shortWildcard: 'DNS:*.local',
  tldWildcard: 'DNS:*.com',
  partialWildcard: 'DNS:f*.lab.local',
  ipv4: 'IP:127.0.0.1',
  ipv6: 'IP:::1',
  cnOnly: undefined,
} as const;

beforeAll(async () => {
  tmp = await tempDir('depotkit-host-match-');
  await Promise.all(Object.entries(SANS).map(async ([name, san]) => certs.set(name, await certWith(tmp.dir, name, san))));
});
afterAll(() => tmp?.cleanup());

// One matcher for lint, check, the management client and both simulators: Node's X509Certificate
// checkHost/checkIP (OpenSSL's X509_check_host) with the subject's CN never consulted.
describe('certificateCoversHost', () => {
  it.each([
    ['exact', 'depot.lab.local', true],
    ['exact', 'DEPOT.Lab.Local', true],
    ['exact', 'depot.lab.local.', true],
    ['exact', 'other.lab.local', false],
    ['wildcard', 'a.lab.local', true],
    ['wildcard', 'a.b.lab.local', false],
    ['wildcard', 'lab.local', false],
    ['shortWildcard', 'depot.local', false],
    ['tldWildcard', 'example.com', false],
    ['partialWildcard', 'foo.lab.local', true],
    ['partialWildcard', 'bar.lab.local', false],
    ['ipv4', '127.0.0.1', true],
    ['ipv4', '127.0.0.2', false],
    ['ipv4', 'localhost', false],
    ['ipv6', '0:0:0:0:0:0:0:1', true],
    ['ipv6', '[::1]', true],
    ['cnOnly', 'depot.lab.local', false],
    ['exact', '', false],
  ] as const)('%s certificate, host %j: %s', (name, host, expected) => {
    expect(certificateCoversHost(certs.get(name)!, host)).toBe(expected);
  });
});
