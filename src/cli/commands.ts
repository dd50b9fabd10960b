import type { Command } from 'commander';
import { programWith, type Register } from './program-core.js';

/**
 * The top-level commands in the order of the flow (make the depot, its
 * certificate, serve it, check it, point the installer at it), each loaded on
 * demand: a command run in a loop by a script pays only for its own modules.
 */
const TOP_LEVEL: readonly { names: readonly string[]; load: () => Promise<Register[]> }[] = [
  {
    names: ['depot'],
    // move-ca hangs under depot.
    load: async () => [(await import('./depot.js')).registerDepotCommands, (await import('./ca-move.js')).registerCaMoveCommand],
  },
  { names: ['esx'], load: async () => [(await import('./esx.js')).registerEsxCommands] },
  { names: ['cert'], load: async () => [(await import('./cert.js')).registerCertCommands] },
  { names: ['serve'], load: async () => [(await import('./serve.js')).registerServeCommands] },
  { names: ['check'], load: async () => [(await import('./check.js')).registerCheckCommand] },
  { names: ['installer'], load: async () => [(await import('./installer.js')).registerInstallerCommands] },
  {
    names: ['mgmt', 'vcenter'],
    load: async () => [(await import('./vcenter.js')).registerMgmtCommands, (await import('./vcenter-depot.js')).registerVcenterDepotCommand],
  },
  { names: ['export'], load: async () => [(await import('./export.js')).registerExportCommand] },
  { names: ['sim'], load: async () => [(await import('./sim.js')).registerSimCommands] },
  { names: ['start', 'quickstart'], load: async () => [(await import('./start.js')).registerStartCommand] },
];

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
