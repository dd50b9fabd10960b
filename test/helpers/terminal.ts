import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { CLI } from './cli.js';

/** util-linux's script(1) runs a command on a pseudo-terminal: what a person at a terminal sees. */
export const SCRIPT = '/usr/bin/script';
export const HAS_SCRIPT = existsSync(SCRIPT);

/** The built CLI run on a pseudo-terminal: everything written to it (stdout and stderr), escape codes and all. */
export async function onTerminal(args: string[]): Promise<string> {
  const command = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  // script exits with the command's status (-e): a failing command's output is what counts.
  const { stdout } = await promisify(execFile)(SCRIPT, ['-qec', command, '/dev/null'], { maxBuffer: 64 * 1024 * 1024 }).catch((err: { stdout: string }) => err);
  return stdout;
}

/**
 * The screen a terminal shows once `output` is written to it: lines written, then moved over, erased and
 * overwritten by the cursor movements and erasures progress bars use (the CSI codes of Node's readline:
 * cursor up/down/column, erase in line, erase below). Other escape codes change nothing shown.
 */
export function finalScreen(output: string): string[] {
  const lines: string[][] = [[]];
  let row = 0;
  let col = 0;
  const line = () => (lines[row] ??= []);
  for (let i = 0; i < output.length; i++) {
    const c = output[i]!;
    if (c === '\x1b' && output[i + 1] === '[') {
      const m = /^\[([?0-9;]*)([A-Za-z])/.exec(output.slice(i + 1));
      if (!m) continue;
      i += m[0].length;
      const n = Number(m[1] || '0');
      switch (m[2]) {
        case 'A':
          row = Math.max(0, row - (n || 1));
          break;
        case 'B':
          row += n || 1;
          break;
        case 'G':
          col = Math.max(0, (n || 1) - 1);
          break;
        case 'K':
          if (n === 2) lines[row] = [];
          else if (n === 0) line().length = Math.min(line().length, col);
          break;
        case 'J':
          line().length = Math.min(line().length, col);
          lines.length = row + 1;
          break;
      }
    } else if (c === '\r') col = 0;
    else if (c === '\n') {
      row++;
      col = 0;
    } else {
      line()[col++] = c;
    }
  }
  return lines.map((l) =>
    Array.from(l, (ch) => ch ?? ' ')
      .join('')
      .trimEnd(),
  );
}
