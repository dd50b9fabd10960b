/**
 * A runbook's rehearsal as a test: a folder of its own with `depotkit` (the
 * built CLI) first on the PATH, its new RSA keys from the suite's pool (the
 * sizes the runbook asks for, not generated anew in each command), the block
 * run there, and whatever it left running killed afterwards so that no server
 * outlives the test.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { freePorts, portAccepts } from './ports.js';
import { tempDir } from './temp.js';
import { assignedNames, processesUnder, runBash, setVariables, shBlockAfter, writeDepotkitShim, shimEnv, type ShellResult } from './readme.js';

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
    run: (script, seconds) => runBash(script, { cwd: dir(), env: shimEnv(bin), seconds, file: join(dir(), `${name}.sh`) }),
  };
}

/** A runbook's rehearsal block as run: what it printed, its folder, and the ports it was given. */
export interface RunbookRun extends ShellResult {
  work: string;
  ports: Record<string, number>;
}

/**
 * A runbook's "Rehearse it on one machine" block, run as written in `rehearsal`'s folder: only its `work`
 * (`work` there) and its port variables (`portNames`, free ports) are set. Fails the test unless the block
 * assigns exactly those and ends with exit 0.
 */
export async function rehearseRunbook(rehearsal: Rehearsal, runbook: string, work: string, portNames: string[], seconds: number): Promise<RunbookRun> {
  const block = await shBlockAfter(runbook, '## Rehearse it on one machine');
  expect(assignedNames(block).sort()).toEqual([...portNames, 'work'].sort());
  const picked = await freePorts(portNames.length);
  const ports = Object.fromEntries(portNames.map((name, i) => [name, picked[i]!]));
  const result = await rehearsal.run(setVariables(block, { work, ...ports }), seconds);
  expect(result.code, `the rehearsal stopped (exit ${result.code}):\n${result.stdout}\n${result.stderr}`).toBe(0);
  return { ...result, work, ports };
}

/** Nothing a rehearsal started outlived it: no process under its folder, none of its ports accepting. */
export async function expectNothingLeftRunning(run: RunbookRun): Promise<void> {
  expect(await processesUnder(run.work)).toEqual([]);
  for (const port of Object.values(run.ports)) expect(await portAccepts(port), `port ${port}`).toBe(false);
}
