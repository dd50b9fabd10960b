import { buildProgram } from '../../src/cli/program.js';
import { inCommandLineWords } from '../../src/cli/wording.js';

// The program's flags, learnt once: an option the library names is shown as a flag only when a command has it.
await buildProgram();

/** The library's words as the command line shows them: its options as flags, its operations as commands. */
export function onTheCommandLine(text: string | undefined): string {
  return inCommandLineWords(text ?? '');
}
