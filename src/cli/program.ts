import { createRequire } from 'node:module';
import { Command, CommanderError } from 'commander';
import { EXIT } from '../util/errors.js';
import { printError } from './output.js';
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

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('depotkit')
    .description('Build, certify, serve, check and push air-gapped software depots')
    .version((createRequire(import.meta.url)('../../package.json') as { version: string }).version)
    .showHelpAfterError()
    .exitOverride();
  registerDepotCommands(program);
  registerCertCommands(program);
  registerStartCommand(program);
  registerCheckCommand(program);
  registerServeCommands(program);
  registerMgmtCommands(program);
  registerSimCommands(program);
  registerInstallerCommands(program);
  registerExportCommand(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are not failures; every other commander error is bad usage.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    // One sentence, control characters escaped, the exit code of its kind.
    return printError(err);
  }
}
