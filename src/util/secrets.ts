import { SECRET_FILE_MAX_BYTES } from './limits.js';
import { usageError } from './errors.js';
import { readInto } from './fs.js';
import { registerSecret } from './scrub.js';

export interface SecretSource {
  /** A file whose first line is the secret. */
  file?: string;
  /** The name of an environment variable that holds the secret. */
  env?: string;
}

/**
 * Reads a password from a file or an environment variable: never from the
 * command line, where `ps` and shell history would show it. What is read is
 * registered with the scrub (scrub.ts): nothing printed or written shows it.
 */
export async function readSecret(source: SecretSource, what: string): Promise<string> {
  if (source.file) {
    const secret = await readFirstLine(source.file, what);
    if (!secret) throw usageError(`${source.file} is empty: its first line should hold the ${what}.`);
    return registerSecret(secret);
  }
  if (source.env) {
    const value = process.env[source.env];
    if (!value) throw usageError(`The environment variable ${source.env} that should hold the ${what} is not set.`);
    return registerSecret(value);
  }
  throw usageError(`No ${what} given.`, 'Pass it in a file (`passwordFile`) or an environment variable (`passwordEnv`).');
}

/**
 * Asks for a secret: a prompt on a terminal, say. The caller gives it; the
 * library never opens a terminal of its own.
 */
export type SecretPrompt = (question: string) => Promise<string>;

/**
 * The one password resolver: from its file or its variable, or, neither
 * given, from `prompt` (`question` is what it asks); without a prompt, a
 * usage error. What is typed is registered with the scrub as what is read.
 */
export async function resolvePassword(source: SecretSource, what: string, prompt?: SecretPrompt, question = what): Promise<string> {
  if (source.file || source.env || prompt === undefined) return readSecret(source, what);
  return registerSecret(await prompt(question));
}

/**
 * The first line of `file`, reading at most {@link SECRET_FILE_MAX_BYTES}:
 * a device such as /dev/zero or a huge file given by mistake is refused at
 * once instead of being read whole into memory.
 */
async function readFirstLine(file: string, what: string): Promise<string> {
  const buffer = Buffer.alloc(SECRET_FILE_MAX_BYTES);
  // Up to a line end, the end, or the cap.
  const length = await readInto(file, buffer, (read) => read.includes(0x0a));
  const data = buffer.subarray(0, length);
  const end = data.indexOf(0x0a);
  if (end < 0 && length === buffer.length) {
    throw usageError(`The ${what} file ${file} has no line end in its first ${SECRET_FILE_MAX_BYTES} bytes: it is not a password file.`);
  }
  const line = (end < 0 ? data : data.subarray(0, end)).toString('utf8').replace(/\r$/, '');
  if (line.includes('\0')) throw usageError(`The ${what} file ${file} holds a NUL byte in its first line: it is not a text file.`);
  return line;
}

/**
 * Asks for a secret on a terminal without echoing it. npm's own prompt
 * (`read`, on Node's readline) does the line editing: backspace, ^U, ^W and
 * the arrow keys edit the line instead of landing in the password, and a
 * backspace removes a whole character, never half of one.
 */
export async function promptSecret(prompt: string): Promise<string> {
  if (!process.stdin.isTTY) throw usageError(`${prompt} is needed and there is no terminal to ask on.`, 'Pass it in a file (`passwordFile`).');
  let settled = false;
  // Loaded when a prompt is needed, not at every start.
  const { read } = await import('read');
  const answer = read({ prompt: `${prompt}:`, silent: true, replace: '', input: process.stdin, output: process.stderr }).then(
    (value) => {
      settled = true;
      return registerSecret(value);
    },
    () => {
      settled = true;
      throw usageError('Cancelled.');
    },
  );
  // ^D on an empty line closes the prompt without an answer; the prompt would then wait forever.
  const closed = new Promise<never>((_, reject) => {
    process.stdin.once('pause', () =>
      setImmediate(() => {
        if (!settled) reject(usageError('Cancelled.'));
      }),
    );
  });
  try {
    return await Promise.race([answer, closed]);
  } finally {
    process.stderr.write('\n');
  }
}
