export { checkDepot, type CheckOptions, type CheckResult } from './check.js';
export { CHECK_DEFAULTS } from './defaults.js';
// The depot URL is read by check and by depot mirror alike: it lives in util, one floor down.
export { type DepotUrl, depotFileUrl, parseDepotUrl } from '../util/depot-url.js';
