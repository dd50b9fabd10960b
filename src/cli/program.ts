import type { Command } from 'commander';
import { everyCommand, programFor } from './commands.js';
import { mainWith, programWith } from './program-core.js';

export { usageSentence } from './program-core.js';

/** The whole program, every command loaded at once: for tests that walk every option. */
export async function buildProgram(): Promise<Command> {
  return programWith(await everyCommand());
}

/** Runs the command line `argv`, loading only the invoked command (commands.ts); the single executable's entry. */
export function main(argv: string[]): Promise<number> {
  return mainWith(argv, programFor);
}
