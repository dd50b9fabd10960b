import type { Command } from 'commander';
import { TOP_LEVEL_NAMES, type TopLevelCommand } from './command-names.js';
import { programWith, type Register } from './program-core.js';

/**
 * Each top-level command's modules, loaded on demand: a command run in a loop by a script pays only for its
 * own modules. The commands' order and aliases are TOP_LEVEL_NAMES's.
 */
const LOADERS: Record<TopLevelCommand, () => Promise<Register[]>> = {
  // move-ca hangs under depot.
  depot: async () => [(await import('./depot.js')).registerDepotCommands, (await import('./ca-move.js')).registerCaMoveCommand],
  esx: async () => [(await import('./esx.js')).registerEsxCommands],
  cert: async () => [(await import('./cert.js')).registerCertCommands],
  serve: async () => [(await import('./serve.js')).registerServeCommands],
  check: async () => [(await import('./check.js')).registerCheckCommand],
  installer: async () => [(await import('./installer.js')).registerInstallerCommands],
  mgmt: async () => [(await import('./vcenter.js')).registerMgmtCommands, (await import('./vcenter-depot.js')).registerVcenterDepotCommand],
  export: async () => [(await import('./export.js')).registerExportCommand],
  sim: async () => [(await import('./sim.js')).registerSimCommands],
  start: async () => [(await import('./start.js')).registerStartCommand],
};

const TOP_LEVEL = TOP_LEVEL_NAMES.map((names) => ({ names: names as readonly string[], load: LOADERS[names[0]] }));

/** Every top-level command, for the help that lists them all and for tests that walk every option. */
export async function everyCommand(): Promise<Register[]> {
  return (await Promise.all(TOP_LEVEL.map((c) => c.load()))).flat();
}

/**
 * The program for the command line `argv`: only the invoked top-level
 * command's tree (`help <command>` is that command's), none for the version
 * alone, and every one for the top-level help and a word that is no command
 * (both list them all).
 */
export async function programFor(argv: readonly string[]): Promise<Command> {
  const words = argv.slice(2);
  if (words.length === 1 && ['--version', '-V'].includes(words[0]!)) return programWith([]);
  const [first, second] = words.filter((w) => !w.startsWith('-'));
  const name = first === 'help' ? second : first;
  const invoked = TOP_LEVEL.find((c) => name !== undefined && c.names.includes(name));
  return programWith(invoked ? await invoked.load() : await everyCommand());
}
