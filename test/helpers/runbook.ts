/**
 * A runbook's rehearsal as a test: a folder of its own with `depotkit` (the
 * built CLI) first on the PATH, the block run there, and whatever it left
 * running killed afterwards so that no server outlives the test.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { tempDir } from './temp.js';
import { processesUnder, runBash, writeDepotkitShim, type ShellResult } from './readme.js';

export interface Rehearsal {
  /** The folder the rehearsal runs in (valid once the tests run). */
  dir(): string;
  /** Runs `script` in that folder under bash, stopped after `seconds`. */
  run(script: string, seconds: number): Promise<ShellResult>;
}

/** Registers the folder's set-up and clean-up hooks for the calling test file. */
export function runbookRehearsal(name: string): Rehearsal {
  let tmp: { dir: string; cleanup: () => Promise<void> } | undefined;
  let bin = '';
  beforeAll(async () => {
    tmp = await tempDir(`depotkit-${name}-`);
    bin = join(tmp.dir, 'bin');
    await mkdir(bin);
    await writeDepotkitShim(bin);
  });
  afterAll(async () => {
    if (!tmp) return;
    for (const pid of await processesUnder(tmp.dir)) process.kill(pid, 'SIGKILL');
    await tmp.cleanup();
  });
  const dir = (): string => tmp!.dir;
  return {
    dir,
    run: (script, seconds) =>
      runBash(script, { cwd: dir(), env: { ...process.env, PATH: `${bin}:${process.env.PATH}` }, seconds, file: join(dir(), `${name}.sh`) }),
  };
}
