import { inCommandLineWords } from '../../src/cli/wording.js';

/** The library's words as the command line shows them: its options as flags, its operations as commands. */
export function onTheCommandLine(text: string | undefined): string {
  return inCommandLineWords(text ?? '');
}
