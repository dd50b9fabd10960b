import { beforeAll, describe, expect, it } from 'vitest';
import { namesIn, commandLineWord } from '../../src/cli/wording.js';
import { createCa, issueServerCert, readCertificate, type CaMaterial } from '../../src/cert/index.js';
import { type Credentials, statusFinding } from '../../src/check/answers.js';
import { credentialsFor } from '../../src/check/credentials.js';
import { leafGivenAsCa } from '../../src/check/given-ca.js';
import { connectFinding } from '../../src/check/network.js';
import { parseDepotUrl } from '../../src/util/depot-url.js';
import type { Finding } from '../../src/util/findings.js';
import { brokenServerCert } from '../helpers/certs.js';
import { onTheCommandLine, PROGRAM_FLAGS } from './words.js';

// The check names options and operations by their library names; the command line shows the flags and
// commands it always showed. These are its words before the library stopped spelling flags, verbatim.
const HOST = 'depot.test';
let ca: CaMaterial;

beforeAll(async () => {
  ca = await createCa({ keySize: 2048 });
});

/** Every option or operation a finding names has a command-line word. */
function expectAllNamed(findings: Finding[]): void {
  for (const f of findings) {
    for (const text of [f.message, f.installer ?? '', f.fix ?? '']) {
      for (const name of namesIn(text)) expect(commandLineWord(name, PROGRAM_FLAGS), `${f.id}: \`${name}\``).toBeDefined();
    }
  }
}

describe("the check's words on the command line", () => {
  it('network failures: --as-host for a name only the installer resolves, depotkit serve for a closed port', () => {
    const { url } = parseDepotUrl(`https://${HOST}`);
    const unknown = connectFinding(url, { ok: false, reason: 'unknown-host', detail: 'ENOTFOUND' });
    const refused = connectFinding(url, { ok: false, reason: 'refused', detail: 'ECONNREFUSED' });
    expectAllNamed([unknown, refused]);
    expect(onTheCommandLine(unknown.fix)).toBe(
      `Add ${HOST} to DNS or to the installer's /etc/hosts, or use the name that resolves. When only the installer resolves it, check by address with --as-host ${HOST} (the URL with the depot's IP; TLS names are then checked against ${HOST}).`,
    );
    expect(onTheCommandLine(refused.fix)).toBe('Start the server (depotkit serve) or fix the port in the URL.');
  });

  it('withheld and missing credentials name --ca, --as-host, --allow-http-credentials, --user and --password-file', () => {
    const findings: Finding[] = [];
    credentialsFor(parseDepotUrl(`https://${HOST}`).url, 'depot', 'secret', { stop: false, withheldBecause: 'untrusted' }, findings);
    credentialsFor(parseDepotUrl(`http://${HOST}`).url, 'depot', 'secret', { stop: false, withheldBecause: 'plain HTTP' }, findings);
    const none: Credentials = { user: undefined, header: undefined, withheld: false };
    findings.push(statusFinding('catalog', 'PROD/x', 'GET', 401, none), statusFinding('catalog', 'PROD/x', 'GET', 404, none));
    expectAllNamed(findings);
    expect(findings.map((f) => onTheCommandLine(f.fix))).toEqual([
      "Fix the TLS findings (pass --ca with the CA that issued the depot's certificate, and --as-host with the name the installer uses); the check then sends the credentials.",
      'Serve the depot over HTTPS (depotkit serve <dir> --ca <ca-dir>); to send the password over HTTP anyway, pass --allow-http-credentials.',
      "Pass --user and --password-file; configure the same in the installer's offlineAccount.",
      'Lay out the metadata with depotkit depot build; check that the URL points at the folder that contains PROD/.',
    ]);
  });

  it('a leaf given as CA: the commands that make a CA, issue, trust and inspect, with the names of the depot', async () => {
    const self = brokenServerCert(ca, 'self-signed', HOST);
    const issued = await issueServerCert(ca, { dns: [HOST], keySize: 2048 });
    const other = await issueServerCert(ca, { dns: ['other.test'], keySize: 2048 });
    const byName = leafGivenAsCa(self.certPem, [], HOST, [self.certPem]);
    const byAddress = leafGivenAsCa(self.certPem, [], '127.0.0.1', [self.certPem]);
    const served = leafGivenAsCa(issued.certPem, [], HOST, [issued.certPem]);
    const notServed = leafGivenAsCa(issued.certPem, [], HOST, [other.certPem]);
    expectAllNamed([...byName, ...byAddress, ...served, ...notServed]);
    const make = (names: string) =>
      `The depot's certificate is self-signed, so nothing can vouch for the next one: make a CA, issue the depot's certificate from it, serve that, and import the CA once: depotkit cert ca --out <ca-dir>; depotkit cert issue --ca <ca-dir> ${names} --out <out-dir>; depotkit installer trust --ca <ca-dir>/ca-cert.pem (and check with --ca <ca-dir>/ca-cert.pem).`;
    expect(onTheCommandLine(byName[0]!.fix)).toBe(make(`--dns ${HOST}`));
    expect(onTheCommandLine(byAddress[0]!.fix)).toBe(make('--dns <depot FQDN> --ip 127.0.0.1'));
    const issuer = readCertificate(ca.certPem).subject;
    expect(onTheCommandLine(served[0]!.fix)).toBe(
      `Pass --ca with the certificate of the CA that issued it ("${issuer}"), and import that one into the installer: depotkit installer trust --ca <ca-cert.pem>. For a certificate from depotkit cert issue it is <ca-dir>/ca-cert.pem; depotkit cert inspect <server-chain.pem> --ca <ca-cert.pem> confirms it.`,
    );
    expect(onTheCommandLine(notServed[0]!.fix)).toBe(
      `Pass --ca with the certificate of the CA that issued the depot's certificate ("${issuer}"); depotkit cert inspect <server-chain.pem> --ca <ca-cert.pem> shows whether a CA file is the right one.`,
    );
  });
});
