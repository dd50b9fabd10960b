import { withOptions } from './option-table.js';
import { type Command } from 'commander';
import { INSTALLER_DEFAULT_USER, SDDC_MANAGER_DEFAULT_USER, type ConsumerRole } from '../constants.js';
import { writeFileAtomic } from '../util/fs.js';
import { registerSimMgmtCommand } from './vcenter.js';
import { readUserPassword } from './options.js';
import { note, printJson, printLines, waitForShutdownSignal } from './output.js';

/** `depotkit sim`: simulators of the systems depotkit talks to, one subcommand each. */
export function registerSimCommands(program: Command): void {
  const sim = program.command('sim').description('simulators to rehearse and test against, on real HTTPS');
  registerSimInstallerCommand(sim);
  registerSimMgmtCommand(sim);
}

interface SimInstallerFlags {
  host: string;
  port: number;
  hostname?: string;
  user?: string;
  passwordFile?: string;
  passwordEnv?: string;
  state?: string;
  applianceVersion?: string;
  role: ConsumerRole;
  certOut?: string;
  resolve: Record<string, string>;
  store?: string;
  quiet?: boolean;
  json?: boolean;
}

export function registerSimInstallerCommand(sim: Command): void {
  withOptions(
    sim
      .command('installer')
      .description('an installer or an SDDC Manager: tokens, trusted certificates, depot settings validated against the real depot, appliance info'),
  ).action(async (flags: SimInstallerFlags) => {
    const { startInstallerSimulator, INSTALLER_LAB_PASSWORD } = await import('../simulators/installer/index.js');
    // --user alone still names the user: with the lab password, never asked for (a simulator for rehearsals and tests).
    const user = flags.user ?? (flags.role === 'sddc-manager' ? SDDC_MANAGER_DEFAULT_USER : INSTALLER_DEFAULT_USER);
    const given = flags.passwordFile !== undefined || flags.passwordEnv !== undefined;
    const users = { [user]: given ? await readUserPassword(user, flags) : INSTALLER_LAB_PASSWORD };
    // Listening for signals before the port opens: whoever finds it open may stop us at once.
    const shutdown = waitForShutdownSignal();
    const simulator = await startInstallerSimulator({
      host: flags.host,
      port: flags.port,
      hostname: flags.hostname,
      users,
      stateFile: flags.state,
      version: flags.applianceVersion,
      role: flags.role,
      resolve: flags.resolve,
      store: flags.store,
      onLog: flags.quiet ? undefined : (line) => note(line),
    });
    if (flags.certOut) await writeFileAtomic(flags.certOut, simulator.caPem, { mode: 0o644, force: true });
    if (flags.json) printJson({ url: simulator.url, port: simulator.port, user, ...(flags.certOut ? { certificate: flags.certOut } : {}) });
    else {
      printLines([`${flags.role === 'sddc-manager' ? 'SDDC Manager' : 'Installer'} simulator on ${simulator.url}, user ${user}.`]);
      note('Stop it with Ctrl-C.');
    }
    await shutdown;
    await simulator.close();
  });
}
