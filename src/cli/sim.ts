import type { Command } from 'commander';
import { registerSimMgmtCommand } from './mgmt.js';

/** `depotkit sim ...`: simulators of the systems the toolkit talks to, for labs and tests. */
export function registerSimCommands(program: Command): void {
  const sim = program.command('sim').description('simulators of the systems depotkit talks to, for labs and tests');
  registerSimMgmtCommand(sim);
}
