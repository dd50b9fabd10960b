import { readSecret } from '../util/secrets.js';

/** node-forge and the rest load only when a cert command runs, so every other command starts fast. */
export const loadPki = () => import('../cert/index.js');

/** A passphrase from a file or the environment, never from the command line (ps, shell history). */
export async function passphraseFrom(file: string | undefined, env: string | undefined): Promise<string | undefined> {
  if (file === undefined && env === undefined) return undefined;
  return readSecret({ file, env }, 'CA key passphrase');
}
