import { beforeAll, describe, expect, it } from 'vitest';
import { createCa, issueServerCert, type CaMaterial } from '../../src/cert/index.js';
import { installerUrl } from '../../src/server/status-data.js';
import { statusAccess } from '../../src/server/status/access.js';

// The status page gives the installer a URL by the certificate's name (the installer checks it strictly), and a
// check command that runs as it stands when pasted here, even where that name resolves only on the installer's side.
describe('the URL the status page gives the installer, and its check command', () => {
  let ca: CaMaterial;
  beforeAll(async () => {
    ca = await createCa({ keySize: 2048 });
  });
  const chain = async (dns: string[], ips: string[]) => (await issueServerCert(ca, { dns, ips, keySize: 2048 })).chainPem;
  const only = (names: string[]) => async (name: string) => names.includes(name);

  it("takes the certificate's name that resolves here, before one that does not", async () => {
    const pem = await chain(['nowhere.invalid', 'depot.lab.local', 'localhost'], ['127.0.0.1']);
    expect(await installerUrl(pem, '0.0.0.0', 8443, 'vm', only(['depot.lab.local', 'localhost']))).toEqual({ url: 'https://depot.lab.local:8443' });
  });

  it('keeps a name that resolves only elsewhere for the installer, and checks it from here by address with --as-host', async () => {
    const pem = await chain(['depot.lab.local', 'localhost'], ['10.1.2.3']);
    const served = await installerUrl(pem, '0.0.0.0', 8443, 'vm', only(['localhost']));
    expect(served).toEqual({ url: 'https://depot.lab.local:8443', reachVia: 'https://127.0.0.1:8443' });
    const access = statusAccess({ url: served.url, reachVia: served.reachVia, certPem: pem, auth: { user: 'depot' } }, true);
    expect(access.commands.check).toBe(
      'depotkit check https://127.0.0.1:8443 --as-host depot.lab.local --ca depot-ca.pem --user depot --password-file depot.pass',
    );
    expect(access.commands.installerDepot).toContain('--depot-url https://depot.lab.local:8443');
    expect(await installerUrl(pem, '192.0.2.7', 8443, 'vm', only([]))).toEqual({ url: 'https://depot.lab.local:8443', reachVia: 'https://192.0.2.7:8443' });
  });

  it('never names the machine for a certificate of localhost and 127.0.0.1 alone', async () => {
    const pem = await chain(['localhost'], ['127.0.0.1']);
    expect(await installerUrl(pem, '0.0.0.0', 8443, 'vm', only(['localhost', 'vm']))).toEqual({ url: 'https://localhost:8443' });
  });

  it('over plain HTTP: the address listened on, the machine name for every address, the default port unsaid', async () => {
    expect(await installerUrl(undefined, '::', 80, 'vm', only([]))).toEqual({ url: 'http://vm' });
    expect(await installerUrl(undefined, '::1', 8080, 'vm', only([]))).toEqual({ url: 'http://[::1]:8080' });
  });
});
