export * from './check.js';
export * from './url.js';
export { CHECK_DEFAULTS } from './defaults.js';
