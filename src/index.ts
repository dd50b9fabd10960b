// The library: every capability is usable without the CLI.
export * from './constants.js';
export * from './util/errors.js';
export * from './util/findings.js';
export * from './depot/index.js';
export * from './probe/index.js';
export * from './pki/index.js';
export * from './server/index.js';
export { replaceCertificate, MgmtClient, MgmtApiError, waitForCertificate, type ReplaceCertOptions, type ReplaceCertReport, type MgmtClientOptions, type CsrSpec, type TlsInfo, type TlsReplaceSpec } from './mgmt/index.js';
export { startMgmtSimulator, type MgmtSimulator, type MgmtSimulatorOptions } from './simulators/mgmt/index.js';
export * from './installer/index.js';
export { startInstallerSimulator, type InstallerSimulator, type InstallerSimulatorOptions } from './simulators/installer/index.js';
export * from './transfer/index.js';
