import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { usageError } from '../util/errors.js';
/** File names of the toolkit's certificate folders; nothing else spells them. */

/** A CA folder (`depotkit cert ca --out <dir>`). */
export const CA_KEY_FILE = 'ca-key.pem';
export const CA_CERT_FILE = 'ca-cert.pem';

/** A server folder (`depotkit cert issue --out <dir>`). */
export const SERVER_KEY_FILE = 'server-key.pem';
export const SERVER_CERT_FILE = 'server-cert.pem';
/** The leaf followed by the CA certificate, what a TLS server should send. */
export const SERVER_CHAIN_FILE = 'server-chain.pem';

/** Private keys are readable by their owner only. */
export const PRIVATE_KEY_MODE = 0o600;
export const PUBLIC_FILE_MODE = 0o644;
/** A folder these tools make for a private key: its owner's only, whatever the umask (made with util's makeDir). */
export const PRIVATE_DIR_MODE = 0o700;

/**
 * A CA that signs is a folder (its key is in it): a certificate file given
 * instead is named as such, with the folder it is in when that is a CA
 * folder. A path that is not there is the loader's to explain.
 */
export async function assertCaFolder(path: string): Promise<void> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined || info.isDirectory()) return;
  const folder = dirname(path);
  const hasKey = (await stat(join(folder, CA_KEY_FILE)).catch(() => undefined))?.isFile() === true;
  throw usageError(
    `\`caDir\` ${path} is a file; signing needs the CA folder, which holds the CA's key.`,
    hasKey ? `Give the folder it is in: \`caDir\` ${folder}` : 'Make one with: `makeCa`',
  );
}
