import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { exists } from '../util/fs.js';
import { createCa, loadCaDir, writeCaDir } from './ca.js';
import { CA_CERT_FILE, SERVER_CHAIN_FILE, SERVER_KEY_FILE } from './files.js';
import { issueServerCert, writeServerDir } from './issue.js';

/** The demo CA's common name: not the default CA's, so that the two are told apart in a trust store. */
export const DEMO_CA_CN = 'depotkit demo CA';

export interface DemoCertificates {
  caCertPath: string;
  /** The server's chain (leaf then CA): what it serves. */
  certPath: string;
  keyPath: string;
  /** What was made this time (the rest was reused). */
  made: string[];
}

/**
 * A demo CA in `<dir>/ca` and a server certificate for localhost, 127.0.0.1
 * and this host's name in `<dir>/server`; whatever is there already is
 * reused, so that a CA imported into an installer stays valid across runs.
 */
export async function prepareDemoCertificates(dir: string): Promise<DemoCertificates> {
  const root = resolve(dir);
  const caDir = join(root, 'ca');
  const serverDir = join(root, 'server');
  const made: string[] = [];
  let ca;
  if (await exists(join(caDir, CA_CERT_FILE))) {
    ca = await loadCaDir(caDir);
  } else {
    // The smallest key the installer takes: a demo starts fast.
    ca = await createCa({ cn: DEMO_CA_CN, keySize: 2048 });
    await writeCaDir(caDir, ca);
    made.push('CA');
  }
  if (!(await exists(join(serverDir, SERVER_CHAIN_FILE)))) {
    const dns = [...new Set(['localhost', hostname().toLowerCase()].filter((n) => n !== ''))];
    await writeServerDir(serverDir, await issueServerCert(ca, { dns, ips: ['127.0.0.1'] }));
    made.push('server certificate');
  }
  return { caCertPath: join(caDir, CA_CERT_FILE), certPath: join(serverDir, SERVER_CHAIN_FILE), keyPath: join(serverDir, SERVER_KEY_FILE), made };
}
