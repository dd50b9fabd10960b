import { buildProgram } from '../../src/cli/program.js';
import { flagsOf, inCommandLineWords } from '../../src/cli/wording.js';

/** Every flag of the whole program: an option the library names must be one a command has. */
export const PROGRAM_FLAGS = flagsOf(await buildProgram());

/** The check's words as the command line shows them: its options as flags, its operations as commands. */
export function onTheCommandLine(text: string | undefined): string {
  return inCommandLineWords(text ?? '');
}
