import type { InstallerSimulator, InstallerSimulatorOptions } from '../../src/simulators/installer/index.js';
import { afterAll, beforeAll } from 'vitest';
import { startSim, startTestDepot, type TestDepot } from '../installer/helpers.js';
import { tempDir } from './temp.js';

/** Runs `fn` with a simulated installer (the tests' user and password) and closes it whatever happens. */
export async function withSim<T>(fn: (sim: InstallerSimulator) => Promise<T>, opts: InstallerSimulatorOptions = {}): Promise<T> {
  const sim = await startSim(opts);
  try {
    return await fn(sim);
  } finally {
    await sim.close();
  }
}

/**
 * Registers the hooks that start a served demo depot (startTestDepot) in a temporary folder before the file's
 * tests and stop both after them; `set` is given them once started.
 */
export function useTestDepot(prefix: string, set: (started: { dir: string; depot: TestDepot }) => void): void {
  let tmp: { dir: string; cleanup: () => Promise<void> } | undefined;
  let depot: TestDepot | undefined;
  beforeAll(async () => {
    tmp = await tempDir(prefix);
    depot = await startTestDepot(tmp.dir);
    set({ dir: tmp.dir, depot });
  });
  afterAll(async () => {
    await depot?.close();
    await tmp?.cleanup();
  });
}
