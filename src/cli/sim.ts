import { Option, type Command } from 'commander';
import { CONSUMER_ROLES, INSTALLER_DEFAULT_USER, SDDC_MANAGER_DEFAULT_USER, type ConsumerRole } from '../constants.js';
import { writeFileAtomic } from '../util/fs.js';
import { registerSimMgmtCommand } from './vcenter.js';
import { hostOption, jsonOption, passwordFileOption, portOption, readUserPassword, userOption } from './options.js';
import { InvalidOption, note, printJson, printLines, waitForShutdownSignal } from './output.js';

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

/**
 * `--resolve NAME=ADDRESS`, or curl's `NAME:PORT:ADDRESS` (the port is not
 * kept: the name resolves to the address on every port), collected.
 */
function collectResolve(value: string, previous: Record<string, string>): Record<string, string> {
  const curl = /^([^:=\s]+):\d{1,5}:(.+)$/.exec(value);
  const pair = curl ?? /^([^:=\s]+)=(.+)$/.exec(value);
  if (!pair) throw new InvalidOption(`--resolve ${value}: expected NAME=ADDRESS (or curl's NAME:PORT:ADDRESS).`);
  return { ...previous, [pair[1]!]: pair[2]! };
}

export function registerSimInstallerCommand(sim: Command): void {
  sim
    .command('installer')
    .description('an installer or an SDDC Manager: tokens, trusted certificates, depot settings validated against the real depot, appliance info')
    .addOption(hostOption('127.0.0.1'))
    .addOption(portOption(0, 'port (0 picks a free one)'))
    .option('--hostname <name>', 'name in its self-signed certificate (default: --host)')
    // The administrator follows the role, so the default is chosen once the role is known.
    .addOption(userOption(`the user that may log in (default: ${INSTALLER_DEFAULT_USER}, or ${SDDC_MANAGER_DEFAULT_USER} as an SDDC Manager)`))
    .addOption(passwordFileOption("that user's"))
    .addOption(
      new Option(
        '--password-env <name>',
        "an environment variable that holds that user's password (without either: the lab password in the README, never asked for)",
      ),
    )
    .option('--state <file>', 'keep trusted certificates, depot settings and tokens in this file across restarts')
    .option('--appliance-version <version>', 'version appliance-info reports; 9.1 and later take the depot url field')
    .addOption(
      new Option('--role <role>', 'the consumer it plays; appliance-info answers VcfInstaller or SddcManager')
        .choices(Object.keys(CONSUMER_ROLES))
        .default('installer'),
    )
    .option('--cert-out <file>', 'write its self-signed certificate here (for --installer-ca)')
    .option('--resolve <name=address>', 'reach the depot NAME at ADDRESS, without DNS or a hosts file (repeatable)', collectResolve, {})
    .option('--store <dir>', 'keep the bundles it downloads here, laid out like the depot (default: only their verdict)')
    .option('--quiet', 'do not print the service log')
    .addOption(jsonOption('print the address as JSON'))
    .action(async (flags: SimInstallerFlags) => {
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
