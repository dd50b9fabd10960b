import type { InstallerSimulator, InstallerSimulatorOptions } from '../../src/simulators/installer/index.js';
import { startSim } from '../installer/helpers.js';

/** Runs `fn` with a simulated installer (the tests' user and password) and closes it whatever happens. */
export async function withSim<T>(fn: (sim: InstallerSimulator) => Promise<T>, opts: InstallerSimulatorOptions = {}): Promise<T> {
  const sim = await startSim(opts);
  try {
    return await fn(sim);
  } finally {
    await sim.close();
  }
}
