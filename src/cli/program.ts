import type { Command } from 'commander';
import { mainWith, programWith } from './program-core.js';
// One line per capability: each file registers its own command group.
import { registerDepotCommands } from './depot.js';
import { registerCertCommands } from './cert.js';
import { registerStartCommand } from './start.js';
import { registerCheckCommand } from './check.js';
import { registerServeCommands } from './serve.js';
import { registerMgmtCommands } from './mgmt.js';
import { registerSimCommands } from './sim.js';
import { registerInstallerCommands } from './installer.js';
import { registerExportCommand } from './export.js';
import { registerCaMoveCommand } from './ca-move.js';

export { usageSentence } from './program-core.js';

/**
 * The whole program, every command loaded at once: for tests that walk every
 * option, and for the single executable, whose bundle holds every module
 * anyway. dist/cli/main.js loads only the invoked command (commands.ts, which
 * lists the same commands in the same order).
 */
export function buildProgram(): Command {
  // In the order of the flow: make the depot, its certificate, serve it, check it, point the installer at it.
  return programWith([
    registerDepotCommands,
    registerCertCommands,
    registerServeCommands,
    registerCheckCommand,
    registerInstallerCommands,
    registerMgmtCommands,
    registerExportCommand,
    registerCaMoveCommand,
    registerSimCommands,
    registerStartCommand,
  ]);
}

export async function main(argv: string[]): Promise<number> {
  return mainWith(argv, async () => buildProgram());
}
