import { createRequire } from 'node:module';
import { Command, CommanderError, Help, type Option } from 'commander';
import { ArgumentsError, EXIT } from '../util/errors.js';
import { conflictSentence } from './options.js';
import { describeError, printError, printReport } from './output.js';
import { invokedAs } from './process.js';

/** The command whose parsing failed, for its usage line. */
const failedIn = new WeakMap<CommanderError, Command>();

/** The command whose action runs, for the usage line after a library's usage error that has no hint of its own. */
let running: Command | undefined;

/**
 * An option's help line, in one place for every command: an empty list or map
 * is no default worth showing, a description that says its own default is not
 * followed by commander's, and a required option says so.
 */
function optionDescription(this: Help, option: Option): string {
  const value: unknown = option.defaultValue;
  const empty = (Array.isArray(value) && value.length === 0) || (value !== null && typeof value === 'object' && Object.keys(value).length === 0);
  const saysItsOwn = option.defaultValueDescription === undefined && /\bdefault\b/.test(option.description);
  const shown =
    empty || saysItsOwn ? Object.assign(Object.create(Object.getPrototypeOf(option) as object) as Option, option, { defaultValue: undefined }) : option;
  const text = Help.prototype.optionDescription.call(this, shown);
  return option.mandatory ? `${text} (required)` : text;
}

/**
 * Commands users reach for that are elsewhere (commander suggests only among
 * siblings): the words typed after `depotkit`, and what to run instead.
 */
const WELL_KNOWN_MISSES: Record<string, string[]> = {
  verify: ['depot verify'],
  build: ['depot build'],
  demo: ['depot demo'],
  pack: ['depot pack'],
  unpack: ['depot unpack'],
  mirror: ['depot mirror'],
  issue: ['cert issue'],
  trust: ['installer trust'],
  push: ['installer connect-depot'],
  'installer push': ['installer connect-depot', 'installer trust'],
  'depot push': ['installer connect-depot'],
  'depot serve': ['serve'],
  'depot check': ['check'],
  version: ['--version'],
};

/** Registers a top-level command (and its subcommands) on the program. */
export type Register = (program: Command) => void;

/** The program with the top-level commands `registers` add, in that order. */
export function programWith(registers: readonly Register[]): Command {
  const program = new Command();
  program
    .name('depotkit')
    .description('Build, certify, serve, check and push air-gapped software depots; the commands are listed in the order of the flow')
    .version((createRequire(import.meta.url)('../../package.json') as { version: string }).version)
    // main() prints commander's complaint as one sentence with the command's usage line, not the whole help.
    .configureOutput({ outputError: () => undefined })
    // Inherited by every command registered after it.
    .configureHelp({ optionDescription });
  for (const register of registers) register(program);
  const remember = (cmd: Command): void => {
    cmd.exitOverride((err) => {
      failedIn.set(err, cmd);
      throw err;
    });
    cmd.commands.forEach(remember);
  };
  remember(program);
  program.hook('preAction', (_program, action) => {
    running = action;
  });
  return program;
}

/** `depotkit cert issue`, as the user runs it (`npx depotkit ...` through npx). */
function commandName(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return [invokedAs(), ...names].join(' ');
}

/**
 * Commander's complaint as one sentence in depotkit's words. `--password` (a
 * common guess) names the options that take a password instead.
 */
export function usageSentence(err: CommanderError, cmd: Command): { message: string; fix?: string } {
  const text = err.message.replace(/^error: /, '');
  const [first = text, suggestion] = text.split('\n');
  const meant = /^\(Did you mean (.+)\?\)$/.exec(suggestion ?? '')?.[1];
  const didYouMean = meant ? ` (did you mean ${meant}?)` : '';
  let m: RegExpExecArray | null;
  if ((m = /^unknown option '([^'=]+)/.exec(first))) {
    const flag = m[1]!;
    const takes = (name: string) => cmd.options.some((o) => o.long === name);
    if (/password$/.test(flag) && takes(`${flag}-file`)) {
      return {
        message: `${flag} is not an option: a password on the command line would show in ps and in the shell's history.`,
        fix: `Use ${flag}-file <file> or ${flag}-env <name>, or give neither to be asked on a terminal.`,
      };
    }
    return { message: `${commandName(cmd)} has no option ${flag}${didYouMean}.` };
  }
  if ((m = /^unknown command '([^']+)'/.exec(first))) {
    const typed = [...commandName(cmd).split(' ').slice(invokedAs().split(' ').length), m[1]!].join(' ');
    const elsewhere = WELL_KNOWN_MISSES[typed];
    const hint = elsewhere ? ` (did you mean ${elsewhere.map((words) => `${invokedAs()} ${words}`).join(' or ')}?)` : didYouMean;
    return { message: `${commandName(cmd)} has no command "${m[1]}"${hint}.` };
  }
  if ((m = /^option '(--[^ ']+)[^']*' cannot be used with option '(--[^ ']+)/.exec(first))) return { message: conflictSentence(m[1]!, m[2]!) };
  if ((m = /^option '(--[^ ']+)[^']*' argument '(.*)' is invalid\. Allowed choices are (.*)\.$/.exec(first)))
    return { message: `${m[1]} must be one of ${m[3]}, not "${m[2]}".` };
  // Our own parsers' sentences name the option already.
  if ((m = /^option '[^']*' argument '.*' is invalid\. (--.*)$/.exec(first))) return { message: m[1]! };
  if ((m = /^option '(--[^ ']+)[^']*' argument missing/.exec(first))) return { message: `${m[1]} needs a value.` };
  if ((m = /^required option '(--[^ ']+)[^']*' not specified/.exec(first))) return { message: `${m[1]} is required.` };
  if ((m = /^missing required argument '([^']+)'/.exec(first))) return { message: `The <${m[1]}> argument is missing.` };
  return { message: `${first.replace(/\.$/, '')}.` };
}

/** Runs the command line `argv` on the program `build` makes for it; the exit code. */
export async function mainWith(argv: string[], build: (argv: string[]) => Promise<Command>): Promise<number> {
  const program = await build(argv);
  // `-v` alone is what most tools answer with their version; commander takes one short flag for it.
  if (argv.length === 3 && argv[2] === '-v') argv = [...argv.slice(0, 2), '--version'];
  // Decided from the words given, so that even a command line that does not parse answers in JSON.
  const json = argv.slice(2).includes('--json');
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are not failures; every other commander error is bad usage.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      const cmd = failedIn.get(err) ?? program;
      return printReport({ ...usageSentence(err, cmd), exitCode: EXIT.usage }, { json, usage: `${commandName(cmd)} ${cmd.usage()}` });
    }
    // Arguments the library found missing or at odds get the command's usage line, as a command line that does not parse does.
    if (err instanceof ArgumentsError && running) return printReport(describeError(err), { json, usage: `${commandName(running)} ${running.usage()}` });
    // One sentence, control characters escaped, the exit code of its kind.
    return printError(err, { json });
  }
}
