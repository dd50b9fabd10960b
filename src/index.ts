// The library: every capability is usable without the CLI.
export * from './constants.js';
export * from './util/errors.js';
export * from './util/findings.js';
export * from './pki/index.js';
export * from './server/index.js';
