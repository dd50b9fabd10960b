import { InvalidArgumentError } from 'commander';
import { DepotkitError, EXIT, isEnvironmentError, describeFsError } from '../util/errors.js';
import { escapeControlChars } from '../util/text.js';

/**
 * Printing for the CLI: JSON for scripts, plain lines for people. Every line
 * for people goes through here, with its control characters escaped: names
 * from a catalog, an archive, a certificate or a server must not drive the
 * terminal (colours, titles, forged lines). JSON escapes them itself.
 */

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printLines(lines: Iterable<string>): void {
  for (const line of lines) process.stdout.write(`${escapeControlChars(line)}\n`);
}

/** Messages that are not the command's result go to stderr, so stdout stays parseable. */
export function note(message: string): void {
  process.stderr.write(`${escapeControlChars(message)}\n`);
}

export function warn(message: string): void {
  note(`warning: ${message}`);
}

/**
 * Prints a command's failure as one sentence (and its hint) on stderr, and
 * returns the exit code. A full disk or quota met anywhere, even where no
 * sentence was made for it, is the environment's failure (exit 3).
 */
export function printError(err: unknown): number {
  const known = err instanceof DepotkitError ? err : isEnvironmentError(err) ? describeFsError(err, (err as NodeJS.ErrnoException).path ?? 'a file') : undefined;
  if (known) {
    note(`depotkit: ${known.message}`);
    if (known.hint) note(`  ${known.hint}`);
    return known.exitCode;
  }
  note(`depotkit: ${err instanceof Error ? err.message : String(err)}`);
  // A stack is for whoever debugs depotkit, on request only.
  if (process.env.DEPOTKIT_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
  return EXIT.problems;
}

/** Parses a positive integer option, with the option's name in the error. */
export function parseIntOption(name: string) {
  return (value: string): number => {
    if (!/^\d+$/.test(value)) throw new InvalidOption(`${name} takes a whole number, not "${value}".`);
    return Number(value);
  };
}

/** Parses a byte size such as 1048576, 512M, 2GiB. */
export function parseByteSize(value: string): number {
  const match = /^(\d+)\s*([kKmMgGtT]?)(i?[bB])?$/.exec(value.trim());
  if (!match) throw new InvalidOption(`"${value}" is not a size; use bytes or a suffix such as 512M or 2G.`);
  const power = { '': 0, k: 1, m: 2, g: 3, t: 4 }[match[2]!.toLowerCase() as '' | 'k' | 'm' | 'g' | 't'];
  return Number(match[1]) * 1024 ** power;
}

/**
 * Resolves with the first SIGINT or SIGTERM, then stops listening for both:
 * how a command that serves until interrupted knows when to close.
 */
export function waitForShutdownSignal(): Promise<NodeJS.Signals> {
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      for (const s of signals) process.off(s, stop);
      resolve(signal);
    };
    for (const s of signals) process.on(s, stop);
  });
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** commander reports an InvalidArgumentError thrown by an option parser as a usage error. */
export class InvalidOption extends InvalidArgumentError {}
