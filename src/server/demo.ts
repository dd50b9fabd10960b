import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { createCa, loadCaDir, writeCaDir } from '../pki/ca.js';
import { CA_CERT_FILE, SERVER_CHAIN_FILE, SERVER_KEY_FILE } from '../pki/files.js';
import { issueServerCert, writeServerDir } from '../pki/issue.js';
import { exists, writeFileAtomic } from '../util/fs.js';

/** The demo's Basic auth user. */
export const DEMO_USER = 'depot';
const PASSWORD_FILE = 'depot-password';

export interface DemoServing {
  caCertPath: string;
  certPath: string;
  keyPath: string;
  user: string;
  passwordFile: string;
  password: string;
  /** What was made this time (the rest was reused). */
  made: string[];
}

/**
 * A demo CA, a server certificate for localhost, 127.0.0.1 and this host's
 * name, and a random password (0600) in `dir`; whatever is already there is
 * reused, so the CA imported into an installer stays valid across runs.
 */
export async function prepareDemoServing(dir: string): Promise<DemoServing> {
  const root = resolve(dir);
  const caDir = join(root, 'ca');
  const serverDir = join(root, 'server');
  const made: string[] = [];
  let ca;
  if (await exists(join(caDir, CA_CERT_FILE))) {
    ca = await loadCaDir(caDir);
  } else {
    ca = await createCa({ cn: 'depotkit demo CA', keySize: 2048 });
    await writeCaDir(caDir, ca);
    made.push('CA');
  }
  if (!(await exists(join(serverDir, SERVER_CHAIN_FILE)))) {
    const dns = [...new Set(['localhost', hostname().toLowerCase()].filter((n) => n !== ''))];
    await writeServerDir(serverDir, await issueServerCert(ca, { dns, ips: ['127.0.0.1'] }));
    made.push('server certificate');
  }
  const passwordFile = join(root, PASSWORD_FILE);
  if (!(await exists(passwordFile))) {
    await writeFileAtomic(passwordFile, `${randomBytes(18).toString('base64url')}\n`, { mode: 0o600 });
    made.push('password');
  }
  const password = (await readFile(passwordFile, 'utf8')).split(/\r?\n/)[0]!;
  return {
    caCertPath: join(caDir, CA_CERT_FILE),
    certPath: join(serverDir, SERVER_CHAIN_FILE),
    keyPath: join(serverDir, SERVER_KEY_FILE),
    user: DEMO_USER,
    passwordFile,
    password,
    made,
  };
}
