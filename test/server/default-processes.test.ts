import { describe, expect, it } from 'vitest';
import { defaultServingProcesses } from '../../src/server/tuning.js';

describe('serving processes without --workers', () => {
  it('is one per core beyond the first, at least one', () => {
    expect([1, 2, 3, 4, 16].map((cores) => defaultServingProcesses(cores))).toEqual([1, 1, 2, 3, 15]);
  });
});
