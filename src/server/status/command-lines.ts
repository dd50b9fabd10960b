/**
 * The status page's command-line table: the one module of the library that spells depotkit's commands and
 * flags, because the page (HTML and JSON) is read by a person who types them, with no CLI in between to
 * render an operation's library names. The status data names each operation and its values; this shows them.
 */

const COMMANDS = {
  checkDepot: 'depotkit check',
  connectDepot: 'depotkit installer connect-depot',
} as const;

/** The flag of each option the page's commands take. */
const FLAGS = {
  caPems: '--ca',
  asHost: '--as-host',
  user: '--user',
  passwordFile: '--password-file',
  allowHttpCredentials: '--allow-http-credentials',
  installer: '--installer',
  trustCa: '--trust-ca',
  depotUrl: '--depot-url',
  depotUser: '--depot-user',
  depotPasswordFile: '--depot-password-file',
  release: '--release',
  component: '--component',
  imageType: '--image-type',
} as const;

/** A value the reader fills in, shown as it is (`<user>`); any other value is quoted for a POSIX shell. */
export interface Placeholder {
  placeholder: string;
}

/** An operation's values in the order they are shown: the operand (no option), then options with a value or none (`true`). */
export interface CommandData {
  operation: keyof typeof COMMANDS;
  operand?: string;
  options: [option: keyof typeof FLAGS, value: string | Placeholder | true][];
}

/** Quotes a word for a POSIX shell when it needs it. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9@%+=:,./_-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

const shown = (value: string | Placeholder): string => (typeof value === 'string' ? shellWord(value) : value.placeholder);

/** The command line a reader types for `command`. */
export function commandLine(command: CommandData): string {
  const words: string[] = [COMMANDS[command.operation]];
  if (command.operand !== undefined) words.push(shellWord(command.operand));
  for (const [option, value] of command.options) words.push(value === true ? FLAGS[option] : `${FLAGS[option]} ${shown(value)}`);
  return words.join(' ');
}
