import { readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** How long each test file took in a whole run, in seconds: written by `npm run test:durations`. */
export const DURATIONS_FILE = join(import.meta.dirname, '..', 'durations.json');

export function recordedDurations(): Record<string, number> {
  return JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as Record<string, number>;
}

/**
 * Runs the longest test files first, so that the last file to start is a short one and both workers stay busy to
 * the end. vitest's own order needs its cache, which a clean clone has not: it then runs larger files first,
 * and the short files that drive a whole rehearsal (a few lines each) came last, one worker left alone with
 * them. A file not yet recorded runs first, larger first, as vitest does with a file it does not know.
 */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const recorded = recordedDurations();
    const root = this.ctx.config.root;
    const weight = (spec: TestSpecification): [number, number] => {
      const seconds = recorded[relative(root, spec.moduleId)];
      return seconds === undefined ? [1, statSync(spec.moduleId).size] : [0, seconds];
    };
    const keyed = files.map((spec) => ({ spec, isolate: spec.project.config.isolate ? 1 : 0, weight: weight(spec) }));
    // Isolated files first, as vitest does: each has a worker of its own to start.
    keyed.sort((a, b) => b.isolate - a.isolate || b.weight[0] - a.weight[0] || b.weight[1] - a.weight[1]);
    return keyed.map((k) => k.spec);
  }
}
