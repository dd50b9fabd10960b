import { defineConfig, type ViteUserConfig } from 'vitest/config';
import { ownModules } from './test/helpers/tiers.js';
import { LongestFirst } from './test/setup/longest-first.js';

/**
 * The suite (or the test files named), in two projects: the files that share their worker's module graph (the library is
 * loaded once per worker, not once per file: half the suite's CPU on 2 cores) and those that replace a module
 * of it (`vi.mock`), each with a graph of its own.
 */
export function suite(files?: string[]): ViteUserConfig {
  const own = ownModules();
  const include = files ?? ['test/**/*.test.ts'];
  const ownIncluded = files ? own.filter((file) => files.includes(file)) : own;
  // What the files of either project run with. Not inherited from the root (`extends`): a project that inherits
  // globalSetup runs it again, and it is the run's, once (vitest runs the root's whatever the projects).
  const perFile = {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    setupFiles: ['test/setup/keys.ts', 'test/setup/secrets.ts'],
    // Files share modules: what a test stubs or spies on is put back after it.
    restoreMocks: true,
    unstubEnvs: true,
    unstubGlobals: true,
  };
  return defineConfig({
    test: {
      // TLS servers and child processes: keep to the 2 cores CI has.
      maxWorkers: 2,
      globalSetup: ['test/setup/environment.ts', 'test/setup/temp-in-memory.ts', 'test/setup/key-pool.ts'],
      reporters: ['default'],
      // The longest files first (test/durations.json), so that no worker is left alone at the end.
      sequence: { sequencer: LongestFirst },
      projects: [
        { test: { ...perFile, name: 'shared', include, exclude: own, isolate: false } },
        ...(ownIncluded.length > 0 ? [{ test: { ...perFile, name: 'own-modules', include: ownIncluded, isolate: true } }] : []),
      ],
    },
  });
}

export default suite();
