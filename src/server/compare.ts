/** One constant-time comparison for the whole toolkit (util/secret-compare.ts). */
export { constantTimeEqual } from '../util/secret-compare.js';
