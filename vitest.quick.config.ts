import { quickTier } from './test/helpers/tiers.js';
import { suite } from './vitest.config.js';

// The library tier for the edit loop (`npm run test:quick`): the test files that spawn nothing and need no
// build, found by what they import (test/helpers/tiers.ts), so that a new file falls in the right tier by itself.
export default suite(quickTier());
