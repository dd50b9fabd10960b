import { Option } from 'commander';
import { RSA_KEY_SIZES } from '../cert/profiles.js';
import { readSecret } from '../util/secrets.js';
import { wholeNumber } from './options.js';

/** node-forge and the rest load only when a cert command runs, so every other command starts fast. */
export const loadPki = () => import('../cert/index.js');

/** `--key-size`, one of the sizes the toolkit makes; commander's choices are strings, the library takes the number. */
export function keySizeOption(defaultBits: number): Option {
  return new Option('--key-size <bits>', 'RSA key size').choices(RSA_KEY_SIZES.map(String)).default(String(defaultBits));
}

export const daysOption = (defaultDays: number) =>
  new Option('--days <n>', 'validity in days').argParser(wholeNumber('--days', { min: 1 })).default(defaultDays);

/** `--ca-passphrase-file` and `--ca-passphrase-env`, for a CA folder whose key is encrypted. */
export function caPassphraseOptions(): Option[] {
  return [
    new Option('--ca-passphrase-file <file>', "the CA key's passphrase, first line of <file>").conflicts('caPassphraseEnv'),
    new Option('--ca-passphrase-env <name>', "the CA key's passphrase, in environment variable <name>"),
  ];
}

/** A passphrase from a file or the environment, never from the command line (ps, shell history). */
export async function passphraseFrom(file: string | undefined, env: string | undefined): Promise<string | undefined> {
  if (file === undefined && env === undefined) return undefined;
  return readSecret({ file, env }, 'CA key passphrase');
}

export function formatSan(san: { dns: string[]; ips: string[] }): string {
  return [...san.dns.map((d) => `DNS:${d}`), ...san.ips.map((i) => `IP:${i}`)].join(', ');
}
