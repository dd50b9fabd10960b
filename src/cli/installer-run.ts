import { Option, type Command } from 'commander';
import { CONSUMER_ROLES, INSTALLER_DEFAULT_USER, SDDC_MANAGER_DEFAULT_USER } from '../constants.js';
import type { ApplianceInfo, FleetRow, InstallerClient, InstallerTarget, TargetSpec, VcenterTask } from '../installer/index.js';
import { INSTALLER_DEFAULTS } from '../installer/defaults.js';
import { EXIT, usageError } from '../util/errors.js';
import { countProgress } from '../util/progress.js';
import { promptSecret } from '../util/secrets.js';
import { concurrencyOption, jsonOption, passwordEnvOption, passwordFileOption, readPassword, timeoutOption, userOption, warnIfExposed } from './options.js';
import { printJson, printLines, warn } from './output.js';
import { EXIT_INTERRUPTED } from './process.js';

/** The client library loads when an installer command runs, so every other command starts fast. */
let loaded: Promise<typeof import('../installer/index.js')> | undefined;
export const installerLib = () => (loaded ??= import('../installer/index.js'));
/** The sessions alone: what runCommand needs, without the modules of every other installer command (`installer status` runs in loops). */
const sessionLib = () => import('../installer/session.js');

/** Where the installers are (the library's TargetSpec) and how to work on them. */
export interface ConnectionFlags extends TargetSpec {
  timeout: number;
  concurrency: number;
  json?: boolean;
}

export function connectionOptions(cmd: Command): Command {
  return (
    cmd
      .option('--installer <url>', 'one installer, https://host[:port]')
      .option('--inventory <file>', 'a fleet: YAML or JSON list of installers and where their passwords are')
      .addOption(
        new Option('--role <role>', "with --installer: the role it must answer (an inventory gives each entry's role); another role fails its row")
          .choices(Object.keys(CONSUMER_ROLES))
          .conflicts('inventory'),
      )
      // The administrator follows the role, so the default is chosen once the role is known.
      .addOption(userOption(`installer user (with --installer; default: ${INSTALLER_DEFAULT_USER}, or ${SDDC_MANAGER_DEFAULT_USER} with --role sddc-manager)`))
      .addOption(passwordFileOption("the user's"))
      .addOption(passwordEnvOption("the user's"))
      .addOption(
        new Option('--installer-ca <file-or-dir>', "the installer's certificate or its CA, to verify its HTTPS: a certificate file or a CA folder").conflicts(
          'insecure',
        ),
      )
      .option('--insecure', "do not verify the installer's certificate (a warning says so)")
      .addOption(timeoutOption(INSTALLER_DEFAULTS.timeoutMs, 'timeout of each API request'))
      .addOption(concurrencyOption(INSTALLER_DEFAULTS.concurrency, 'installers worked on at once, with --inventory'))
      .addOption(jsonOption('print the result rows as JSON'))
  );
}

/** A row's result as lines for people: the first follows the installer's name. */
export type RowFormatter<T> = (result: T) => string[];

/**
 * Passwords of the installers that name no password source: one prompt per
 * user on a terminal, before any work starts. The password file or variable
 * given on the command line is read first: missing, it is bad input (exit 2),
 * not a failed installer; the inventory's files get the same warning as it.
 */
async function passwordsFor(flags: ConnectionFlags, targets: InstallerTarget[]): Promise<Map<string, string>> {
  const lib = await sessionLib();
  if (flags.passwordFile !== undefined || flags.passwordEnv !== undefined)
    await readPassword({ file: flags.passwordFile, env: flags.passwordEnv }, 'password', 'Password');
  for (const file of new Set(targets.map((t) => t.passwordFile).filter((f): f is string => f !== undefined && f !== flags.passwordFile)))
    await warnIfExposed(file);
  if (targets.some((t) => t.insecure)) warn("not verifying the installer's certificate (--insecure): whoever is on the path sees the password.");
  const passwords = new Map<string, string>();
  for (const { user, installer } of lib.FleetSession.usersWithoutPasswordSource(targets)) {
    if (!process.stdin.isTTY) {
      throw usageError(
        `No password source for ${user} on ${installer}.`,
        flags.inventory ? 'Add passwordEnv or passwordFile to the inventory, or pass --password-file.' : 'Pass --password-file or --password-env.',
      );
    }
    passwords.set(user, await promptSecret(`Password of ${user}`));
  }
  return passwords;
}

/**
 * Resolves the installers and their secrets, runs `task` on each (a client
 * logged in, revoked afterwards; all revoked on Ctrl-C or SIGTERM), prints a
 * row per installer and sets exit 1 when any failed. What `task` draws on the
 * terminal (`drawing`, progress bars) ends before the rows are printed: a bar
 * stopped after them would erase as many rows as it had bars.
 */
export async function runCommand<T>(
  flags: ConnectionFlags,
  task: (client: InstallerClient, target: InstallerTarget, appliance: ApplianceInfo) => Promise<{ ok: boolean; result: T }>,
  format: RowFormatter<T>,
  drawing?: { stop(): void },
  vcenters?: VcenterTask<T>,
): Promise<void> {
  const lib = await sessionLib();
  const targets = await lib.resolveTargets(flags);
  const passwords = await passwordsFor(flags, targets);
  const session = new lib.FleetSession(targets, { concurrency: flags.concurrency, timeoutMs: flags.timeout * 1000, passwords });
  let aborting: Promise<void> | undefined;
  const interrupted = () => {
    warn('interrupted: revoking the open sessions.');
    aborting = session.abort();
    void aborting.then(endInterrupted);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  // A fleet on a terminal shows how far it is; one consumer, JSON or a pipe get the rows only.
  const progress = countProgress('consumers', targets.length, process.stderr, !flags.json && targets.length > 1 && process.stderr.isTTY === true);
  let rows: Array<FleetRow<T>>;
  try {
    rows = await session.run(task, (row) => progress.item(row.ok), vcenters);
  } finally {
    drawing?.stop();
    progress.stop();
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
  }
  // The rows of an interrupted run hold the interruption's own errors (a destroyed connection), not the installers' state.
  if (aborting) return aborting.then(endInterrupted);
  printRows(rows, format, flags.json);
}

function endInterrupted(): never {
  process.exit(EXIT_INTERRUPTED);
}

function printRows<T>(rows: Array<FleetRow<T>>, format: RowFormatter<T>, json: boolean | undefined): void {
  const failed = rows.filter((r) => !r.ok).length;
  if (json) printJson({ ok: failed === 0, installers: rows });
  else {
    printLines(rows.flatMap((row) => rowLines(row, format)));
    if (rows.length > 1) printLines([`${rows.length} consumers: ${rows.length - failed} ok, ${failed} failed.`]);
  }
  process.exitCode = failed > 0 ? EXIT.problems : EXIT.ok;
}

/** The consumer as a row names it: its name, then the role and version appliance-info gave (when it was read). */
function rowHead<T>(row: FleetRow<T>): string {
  return row.role !== undefined ? `${row.name}  ${row.role} ${row.version ?? '?'}` : row.name;
}

function rowLines<T>(row: FleetRow<T>, format: RowFormatter<T>): string[] {
  if (row.result !== undefined) {
    const [first = '', ...rest] = format(row.result);
    return [`${rowHead(row)}  ${row.ok ? 'ok' : 'FAILED'}  ${first}`, ...rest.map((l) => `    ${l}`)];
  }
  const lines = [`${rowHead(row)}  FAILED  ${row.error?.message ?? 'unknown error'}`];
  const remedy = row.error?.remediation ?? row.error?.hint;
  if (remedy) lines.push(`    ${remedy}`);
  return lines;
}

/** CA certificates from PEM files or CA folders made by `depotkit cert ca` (their certificates only). */
export async function readCaCertificates(paths: string[]): Promise<string[]> {
  const { readCaPems } = await import('../cert/trust-source.js');
  return readCaPems(paths);
}
