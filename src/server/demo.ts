import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { prepareDemoCertificates, type DemoCertificates } from '../cert/demo.js';
import { exists, writeFileAtomic } from '../util/fs.js';
import { readSecret } from '../util/secrets.js';

/** The demo's Basic auth user. */
export const DEMO_USER = 'depot';
const PASSWORD_FILE = 'depot-password';

export interface DemoServing extends DemoCertificates {
  user: string;
  passwordFile: string;
  password: string;
}

/** Where `prepareDemoServing(dir)` keeps the demo's password, made or not. */
export function demoPasswordFile(dir: string): string {
  return join(resolve(dir), PASSWORD_FILE);
}

/**
 * What `npm start` serves with: the demo CA and server certificate (pki) and a
 * random password (0600) in `dir`; whatever is already there is reused.
 */
export async function prepareDemoServing(dir: string): Promise<DemoServing> {
  const certificates = await prepareDemoCertificates(dir);
  const passwordFile = demoPasswordFile(dir);
  const made = [...certificates.made];
  if (!(await exists(passwordFile))) {
    await writeFileAtomic(passwordFile, `${randomBytes(18).toString('base64url')}\n`, { mode: 0o600 });
    made.push('password');
  }
  return { ...certificates, made, user: DEMO_USER, passwordFile, password: await readSecret({ file: passwordFile }, 'demo password') };
}
