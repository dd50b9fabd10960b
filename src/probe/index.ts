export * from './check.js';
export * from './url.js';
