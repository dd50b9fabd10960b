import { open } from 'node:fs/promises';
import { SECRET_FILE_MAX_BYTES } from './limits.js';
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
    const secret = await readFirstLine(source.file, what);
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

/**
 * The first line of `file`, reading at most {@link SECRET_FILE_MAX_BYTES}:
 * a device such as /dev/zero or a huge file given by mistake is refused at
 * once instead of being read whole into memory.
 */
async function readFirstLine(file: string, what: string): Promise<string> {
  const buffer = Buffer.alloc(SECRET_FILE_MAX_BYTES);
  let length = 0;
  try {
    const handle = await open(file, 'r');
    try {
      // A pipe or device may return less than asked: read until a line end, the end, or the cap.
      while (length < buffer.length && !buffer.subarray(0, length).includes(0x0a)) {
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
        if (bytesRead === 0) break;
        length += bytesRead;
      }
    } finally {
      await handle.close();
    }
  } catch (err) {
    throw describeFsError(err, file);
  }
  const data = buffer.subarray(0, length);
  const end = data.indexOf(0x0a);
  if (end < 0 && length === buffer.length) {
    throw usageError(`The ${what} file ${file} has no line end in its first ${SECRET_FILE_MAX_BYTES} bytes: it is not a password file.`);
  }
  const line = (end < 0 ? data : data.subarray(0, end)).toString('utf8').replace(/\r$/, '');
  if (line.includes('\0')) throw usageError(`The ${what} file ${file} holds a NUL byte in its first line: it is not a text file.`);
  return line;
}

/** Asks for a secret on a TTY without echoing it. */
export async function promptSecret(prompt: string): Promise<string> {
  if (!process.stdin.isTTY) throw usageError(`${prompt} is needed and there is no terminal to ask on.`, 'Pass --password-file.');
  const stdin = process.stdin;
  // Echo off before the prompt shows: an answer typed (or pasted) at once is not echoed by the terminal.
  stdin.setRawMode(true);
  process.stderr.write(`${prompt}: `);
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
