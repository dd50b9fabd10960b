import { InvalidArgumentError } from 'commander';
import { DepotkitError, EXIT, isEnvironmentError, describeFsError } from '../util/errors.js';
import { scrubSecrets } from '../util/scrub.js';
import { escapeControlChars, escapeControlCharsInJson } from '../util/text.js';
import { asInvoked, whenNpmParentDies } from './process.js';
import { inCommandLineWords } from './wording.js';

/**
 * Printing for the CLI: JSON for scripts, plain lines for people. Every line
 * and every JSON string goes through here, with the secrets the process knows
 * hidden (scrub.ts: a server may echo a password in any message) and its
 * control characters escaped: names from a catalog, an archive, a certificate
 * or a server must not drive the terminal (colours, titles, forged lines).
 * JSON escapes C0 itself; C1 and the bidirectional ones are escaped after. A
 * command named in a line (`depotkit cert issue ...`) is written as the user
 * runs depotkit (`npx depotkit ...` through npx), and an option or operation
 * the library names (`force`) as its flag or command (see wording.ts).
 */

/** Words of the library as the user of the command line reads them. */
export function forTheUser(text: string): string {
  return asInvoked(inCommandLineWords(text));
}

/** Keys of a JSON report whose strings are words for people, not data. */
const WORDS = new Set(['message', 'hint', 'fix', 'installer', 'action', 'next']);

/** A JSON.stringify replacer: every string scrubbed, the library's words under those keys as the command line spells them. */
function wordsForTheUser(key: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const scrubbed = scrubSecrets(value);
  return WORDS.has(key) ? forTheUser(scrubbed) : scrubbed;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${escapeControlCharsInJson(JSON.stringify(value, wordsForTheUser, 2))}\n`);
}

/** A line as the user sees it: no secret, no control character, the library's words as the command line spells them. */
function shown(line: string): string {
  return forTheUser(escapeControlChars(scrubSecrets(line)));
}

export function printLines(lines: Iterable<string>): void {
  for (const line of lines) process.stdout.write(`${shown(line)}\n`);
}

/** Messages that are not the command's result go to stderr, so stdout stays parseable. */
export function note(message: string): void {
  process.stderr.write(`${shown(message)}\n`);
}

export function warn(message: string): void {
  note(`warning: ${message}`);
}

/** A failure as the CLI reports it: one sentence, the exit code of its kind, and what to do, if anything. */
export interface ErrorReport {
  message: string;
  exitCode: number;
  fix?: string;
}

/**
 * What a failure tells the user. A full disk or quota met anywhere, even where
 * no sentence was made for it, is the environment's failure (exit 3); anything
 * unforeseen is exit 1 with its message.
 */
export function describeError(err: unknown): ErrorReport {
  const known =
    err instanceof DepotkitError ? err : isEnvironmentError(err) ? describeFsError(err, (err as NodeJS.ErrnoException).path ?? 'a file') : undefined;
  if (known) return { message: known.message, exitCode: known.exitCode, ...(known.fix ? { fix: known.fix } : {}) };
  return { message: err instanceof Error ? err.message : String(err), exitCode: EXIT.problems };
}

/**
 * Prints a failure: one sentence (and its fix, or the command's usage line)
 * on stderr; with `json`, also `{"error": {message, exitCode, fix}}` on
 * stdout, so that a script reading stdout always gets JSON. Returns the exit code.
 */
export function printReport(report: ErrorReport, options: { json?: boolean; usage?: string } = {}): number {
  note(`depotkit: ${report.message}`);
  if (report.fix) note(`  ${report.fix}`);
  if (options.usage) note(`usage: ${options.usage}`);
  // A script gets the same help: the fix, or for a command line that does not parse, the usage line.
  const fix = report.fix ? forTheUser(report.fix) : options.usage ? `usage: ${options.usage}` : undefined;
  if (options.json) printJson({ error: { message: forTheUser(report.message), exitCode: report.exitCode, ...(fix ? { fix } : {}) } });
  return report.exitCode;
}

/** Prints a command's failure (see printReport) and returns its exit code. */
export function printError(err: unknown, options: { json?: boolean } = {}): number {
  const code = printReport(describeError(err), options);
  // A stack is for whoever debugs depotkit, on request only.
  if (process.env.DEPOTKIT_DEBUG && err instanceof Error && !(err instanceof DepotkitError)) process.stderr.write(`${scrubSecrets(err.stack ?? '')}\n`);
  return code;
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
 * how a command that serves until interrupted knows when to close. Also
 * resolves (as SIGTERM) when the npm process that started it is gone.
 */
export function waitForShutdownSignal(): Promise<NodeJS.Signals> {
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      for (const s of signals) process.off(s, stop);
      stopWatching();
      resolve(signal);
    };
    for (const s of signals) process.on(s, stop);
    const stopWatching = whenNpmParentDies(() => stop('SIGTERM'));
  });
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** commander reports an InvalidArgumentError thrown by an option parser as a usage error. */
export class InvalidOption extends InvalidArgumentError {}
