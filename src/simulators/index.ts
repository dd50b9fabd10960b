// Simulators of the systems depotkit talks to, on real sockets.
export { startInstallerSimulator, INSTALLER_LAB_PASSWORD, type InstallerSimulator, type InstallerSimulatorOptions } from './installer/index.js';
export { startMgmtSimulator, type MgmtSimulator, type MgmtSimulatorOptions } from './vcenter/index.js';
