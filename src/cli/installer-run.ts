import type { ApplianceInfo, FleetRow, InstallerClient, InstallerTarget, TargetSpec, VcenterTask } from '../installer/index.js';
import { EXIT } from '../util/errors.js';
import { countProgress } from '../util/progress.js';
import { terminalPrompt } from './options.js';
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

/** A row's result as lines for people: the first follows the installer's name. */
export type RowFormatter<T> = (result: T) => string[];

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
  // The library reads the password file or variable given (bad input, exit 2, when missing) and asks for the rest through the prompt.
  const targets = await lib.resolveTargets(flags);
  if (targets.some((t) => t.insecure)) warn("not verifying the installer's certificate (--insecure): whoever is on the path sees the password.");
  const session = new lib.FleetSession(targets, { concurrency: flags.concurrency, timeoutMs: flags.timeout * 1000, prompt: terminalPrompt() });
  for (const warning of await session.resolvePasswords()) warn(warning);
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
  const remedy = row.error?.fix;
  if (remedy) lines.push(`    ${remedy}`);
  return lines;
}

/** CA certificates from PEM files or CA folders made by `depotkit cert ca` (their certificates only). */
export async function readCaCertificates(paths: string[]): Promise<string[]> {
  const { readCaPems } = await import('../cert/trust-source.js');
  return readCaPems(paths);
}
