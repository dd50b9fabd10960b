// The library: every capability is usable without the CLI, one namespace each
// (also importable alone: `depotkit/depot`, `depotkit/cert`, ...).
export * as depot from './depot/index.js';
export * as cert from './cert/index.js';
export * as server from './server/index.js';
export * as check from './check/index.js';
export * as installer from './installer/index.js';
export * as vcenter from './vcenter/index.js';
export * as esx from './esx/index.js';
export * as procedures from './procedures/index.js';
export * as transfer from './transfer/index.js';
export * as exporters from './export/index.js';
export * as simulators from './simulators/index.js';
export * as constants from './constants.js';
export { DepotkitError, EXIT, usageError } from './util/errors.js';
export type { Finding, Severity } from './util/findings.js';
