import { readFile } from 'node:fs/promises';
import { describeFsError, usageError } from './errors.js';

export interface SecretSource {
  /** A file whose first line is the secret. */
  file?: string;
  /** The name of an environment variable that holds the secret. */
  env?: string;
}

/**
 * Reads a password from a file or an environment variable: never from the
 * command line, where `ps` and shell history would show it.
 */
export async function readSecret(source: SecretSource, what: string): Promise<string> {
  if (source.file) {
    let text: string;
    try {
      text = await readFile(source.file, 'utf8');
    } catch (err) {
      throw describeFsError(err, source.file);
    }
    const secret = text.split(/\r?\n/)[0] ?? '';
    if (!secret) throw usageError(`The ${what} file ${source.file} is empty.`);
    return secret;
  }
  if (source.env) {
    const value = process.env[source.env];
    if (!value) throw usageError(`The environment variable ${source.env} that should hold the ${what} is not set.`);
    return value;
  }
  throw usageError(`No ${what} given.`, 'Pass it in a file (--password-file) or an environment variable.');
}

/** Asks for a secret on a TTY without echoing it. */
export async function promptSecret(prompt: string): Promise<string> {
  if (!process.stdin.isTTY) throw usageError(`${prompt} is needed and there is no terminal to ask on.`, 'Pass --password-file.');
  process.stderr.write(`${prompt}: `);
  const stdin = process.stdin;
  stdin.setRawMode(true);
  stdin.resume();
  stdin.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let value = '';
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') {
          finish();
          resolve(value);
          return;
        }
        if (ch === '\u0003') {
          finish();
          reject(usageError('Cancelled.'));
          return;
        }
        if (ch === '\u007f') value = value.slice(0, -1);
        else value += ch;
      }
    };
    const finish = () => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
    };
    stdin.on('data', onData);
  });
}
