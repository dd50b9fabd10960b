// The library: every capability is usable without the CLI, one namespace each
// (also importable alone: `depotkit/depot`, `depotkit/pki`, ...).
export * as depot from './depot/index.js';
export * as pki from './pki/index.js';
export * as server from './server/index.js';
export * as probe from './probe/index.js';
export * as installer from './installer/index.js';
export * as mgmt from './mgmt/index.js';
export * as transfer from './transfer/index.js';
export * as exporters from './export/index.js';
export * as simulators from './simulators/index.js';
export * as constants from './constants.js';
export { DepotkitError, EXIT, usageError } from './util/errors.js';
export type { Finding, Severity } from './util/findings.js';
