import { Option, type Command } from 'commander';
import { BUNDLE_DOWNLOAD_STATUS, INSTALLER_DEFAULT_USER, INSTALLER_IMAGE_TYPES, INSTALLER_PRODUCT_SKUS } from '../constants.js';
import type { InstallerClient, DepotPushResult, DownloadReport, SyncResult, DepotSpec, FleetRow, InstallerStatus, TrustOutcome } from '../installer/index.js';
import { INSTALLER_DEFAULTS } from '../installer/defaults.js';
import { EXIT, usageError } from '../util/errors.js';
import { byteBars, formatBytes } from '../util/progress.js';
import { promptSecret } from '../util/secrets.js';
import { plural } from '../util/text.js';
import {
  assertUserForPassword,
  choiceOption,
  concurrencyOption,
  jsonOption,
  passwordEnvOption,
  passwordFileOption,
  readPassword,
  secondsOption,
  timeoutOption,
  trustOption,
  warnIfExposed,
  wholeNumber,
} from './options.js';
import { collect, printJson, printLines, warn } from './output.js';
import { EXIT_INTERRUPTED } from './process.js';

/** The client library loads when an installer command runs, so every other command starts fast. */
let loaded: Promise<typeof import('../installer/index.js')> | undefined;
const installerLib = () => (loaded ??= import('../installer/index.js'));

interface ConnectionFlags {
  installer?: string;
  inventory?: string;
  user: string;
  passwordFile?: string;
  passwordEnv?: string;
  installerCa?: string;
  insecure?: boolean;
  timeout: number;
  concurrency: number;
  json?: boolean;
}

interface TrustFlags extends ConnectionFlags {
  ca: string[];
}

interface DepotFlags extends ConnectionFlags {
  depotUrl?: string;
  depotHost?: string;
  depotPort: number;
  depotUser?: string;
  depotPasswordFile?: string;
  depotPasswordEnv?: string;
  trustCa: string[];
  force?: boolean;
  waitTimeout: number;
  sync: boolean;
  syncTimeout: number;
}

interface DownloadFlags extends ConnectionFlags {
  release: string;
  imageType: string;
  component: string[];
  sku: string;
  waitTimeout: number;
}

function connectionOptions(cmd: Command): Command {
  return cmd
    .option('--installer <url>', 'one installer, https://host[:port]')
    .option('--inventory <file>', 'a fleet: YAML or JSON list of installers and where their passwords are')
    .option('--user <name>', 'installer user (with --installer)', INSTALLER_DEFAULT_USER)
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
    .addOption(jsonOption('print the result rows as JSON'));
}

export function registerInstallerCommands(program: Command): void {
  const installer = program
    .command('installer')
    .description("the installer: trust the depot's CA, point it at the depot, show its state; one installer or a fleet");

  connectionOptions(installer.command('trust').description('import CA certificates as TRUSTED_FOR_OUTBOUND (compares certificates: a re-run imports nothing)'))
    .addOption(trustOption('--ca', 'the CA certificate(s) to trust', { required: true }))
    .action(async (flags: TrustFlags) => {
      const lib = await installerLib();
      const pems = await readCaCertificates(flags.ca);
      for (const sentence of lib.leafTrustWarnings(pems)) warn(sentence);
      await runCommand(flags, async (client) => ({ ok: true, result: await lib.ensureTrusted(client, pems) }), trustLine);
    });

  // `installer depot`, its first name, read oddly beside `depotkit depot`: kept as an alias.
  connectionOptions(
    installer
      .command('connect-depot')
      .alias('depot')
      .description(
        `update the installer's offline depot settings, wait for its validation, have it sync the depot's metadata (up to ${INSTALLER_DEFAULTS.syncTimeoutMs / 1000} s) and report the status`,
      ),
  )
    .option('--depot-url <url>', 'the depot, https://host[:port][/prefix] (http:// and prefixes need 9.1)')
    .option('--depot-host <host>', "the depot's host name (as its certificate names it)")
    .option('--depot-port <port>', "the depot's port", wholeNumber('--depot-port', { min: 1, max: 65535 }), INSTALLER_DEFAULTS.depotPort)
    .option('--depot-user <name>', 'depot Basic auth user (none: the depot is open)')
    .addOption(passwordFileOption("the depot user's", 'depot-'))
    .addOption(passwordEnvOption("the depot user's", 'depot-'))
    .addOption(trustOption('--trust-ca', 'import this CA first, as installer trust does'))
    .option('--force', 'push even when the installer already has these settings and reaches the depot')
    .addOption(secondsOption('--wait-timeout', 'how long to wait for the depot status', INSTALLER_DEFAULTS.depotWaitMs / 1000))
    .option(
      '--no-sync',
      `do not have the installer sync the depot's metadata once it accepts the depot (by default it does, waiting up to ${INSTALLER_DEFAULTS.syncTimeoutMs / 1000} s: --sync-timeout)`,
    )
    .addOption(secondsOption('--sync-timeout', 'how long to wait for the sync', INSTALLER_DEFAULTS.syncTimeoutMs / 1000))
    .action(async (flags: DepotFlags) => {
      const lib = await installerLib();
      if (!!flags.depotUrl === !!flags.depotHost) throw usageError('Give the depot with --depot-url, or with --depot-host (and --depot-port), not both.');
      const spec: DepotSpec = flags.depotUrl ? { url: flags.depotUrl } : { hostname: flags.depotHost, port: flags.depotPort };
      if (flags.depotUser) spec.username = flags.depotUser;
      // Before any password is asked for or anything is sent.
      lib.checkDepotSpec(spec);
      assertUserForPassword(
        flags.depotUser,
        { passwordFile: flags.depotPasswordFile, passwordEnv: flags.depotPasswordEnv },
        '--depot-user',
        '--depot-password',
      );
      if (flags.depotUser) {
        spec.password = await readPassword(
          { file: flags.depotPasswordFile, env: flags.depotPasswordEnv },
          `password of depot user ${flags.depotUser}`,
          `Password of depot user ${flags.depotUser}`,
          '--depot-password',
        );
      }
      const caPems = flags.trustCa.length > 0 ? await readCaCertificates(flags.trustCa) : undefined;
      for (const sentence of lib.leafTrustWarnings(caPems ?? [])) warn(sentence);
      await runCommand(
        flags,
        async (client) => {
          const trusted = caPems ? await lib.ensureTrusted(client, caPems) : undefined;
          const pushed = await lib.pushDepot(client, spec, { force: flags.force, waitTimeoutMs: flags.waitTimeout * 1000 });
          const sync =
            flags.sync && pushed.ok
              ? await lib.ensureSynced(client, { settingsChanged: pushed.action === 'updated', timeoutMs: flags.syncTimeout * 1000 })
              : undefined;
          return { ok: pushed.ok && (sync?.ok ?? true), result: { ...pushed, ...(trusted ? { trusted } : {}), ...(sync ? { sync } : {}) } };
        },
        depotLine,
      );
    });

  connectionOptions(
    installer.command('download').description('have the installer download every bundle of a release from its depot, and wait until each is validated'),
  )
    .requiredOption('--release <version>', 'the release, as the installer lists it (e.g. 9.0.1.0)')
    .addOption(choiceOption('--image-type <type>', 'the kind of bundles', INSTALLER_IMAGE_TYPES, INSTALLER_IMAGE_TYPES[0]))
    .option('--component <name>', 'only the bundles of this component (repeatable)', collect, [])
    .option('--sku <sku>', 'the product whose release it is', INSTALLER_PRODUCT_SKUS[0])
    .addOption(secondsOption('--wait-timeout', 'how long to wait for every download', INSTALLER_DEFAULTS.downloadTimeoutMs / 1000))
    .action(async (flags: DownloadFlags) => {
      const lib = await installerLib();
      const imageType = flags.imageType;
      // Byte bars for one installer on a terminal; a fleet or JSON gets the rows at the end.
      const bars = byteBars(!flags.json && !!flags.installer && process.stderr.isTTY === true);
      try {
        await runCommand(
          flags,
          async (client) => {
            const report = await lib.downloadRelease(client, {
              release: flags.release,
              imageType,
              components: flags.component.length > 0 ? flags.component : undefined,
              sku: flags.sku,
              timeoutMs: flags.waitTimeout * 1000,
              onProgress: (rows) => rows.forEach((b) => bars.update(b.id, `${b.component.padEnd(20)} ${b.status.padEnd(10)}`, b.downloadedSize, b.size)),
            });
            return { ok: report.ok, result: report };
          },
          downloadLines,
        );
      } finally {
        bars.stop();
      }
    });

  connectionOptions(installer.command('status').description('appliance info, depot settings and status, trusted certificates')).action(
    async (flags: ConnectionFlags) => {
      const lib = await installerLib();
      await runCommand(flags, async (client) => ({ ok: true, result: await lib.installerStatus(client) }), statusLines);
    },
  );
}

type RowFormatter<T> = (result: T) => string[];

/**
 * Resolves the installers and their secrets, runs `task` on each (a client
 * logged in, revoked afterwards; all revoked on Ctrl-C or SIGTERM), prints a
 * row per installer and sets exit 1 when any failed.
 */
async function runCommand<T>(
  flags: ConnectionFlags,
  task: (client: InstallerClient) => Promise<{ ok: boolean; result: T }>,
  format: RowFormatter<T>,
): Promise<void> {
  const lib = await installerLib();
  const targets = await lib.resolveTargets(flags);
  // A password file or variable given here is read now: missing, it is bad input (exit 2), not a failed installer.
  if (flags.passwordFile !== undefined || flags.passwordEnv !== undefined)
    await readPassword({ file: flags.passwordFile, env: flags.passwordEnv }, 'password', 'Password');
  // The inventory's password files get the same warning as one given on the command line.
  for (const file of new Set(targets.map((t) => t.passwordFile).filter((f): f is string => f !== undefined && f !== flags.passwordFile)))
    await warnIfExposed(file);
  if (targets.some((t) => t.insecure)) warn("not verifying the installer's certificate (--insecure): whoever is on the path sees the password.");
  // Installers that name no password source: one prompt per user on a terminal, before any work starts.
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
  const session = new lib.FleetSession(targets, { concurrency: flags.concurrency, timeoutMs: flags.timeout * 1000, passwords });
  let aborting: Promise<void> | undefined;
  const interrupted = () => {
    warn('interrupted: revoking the open sessions.');
    aborting = session.abort();
    void aborting.then(endInterrupted);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  let rows: Array<FleetRow<T>>;
  try {
    rows = await session.run(task);
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
  }
  // The rows of an interrupted run hold the interruption's own errors (a destroyed connection), not the installers' state.
  if (aborting) return aborting.then(endInterrupted);
  const failed = rows.filter((r) => !r.ok).length;
  if (flags.json) printJson({ ok: failed === 0, installers: rows });
  else {
    printLines(rows.flatMap((row) => rowLines(row, format)));
    if (rows.length > 1) printLines([`${rows.length} installers: ${rows.length - failed} ok, ${failed} failed.`]);
  }
  process.exitCode = failed > 0 ? EXIT.problems : EXIT.ok;
}

function endInterrupted(): never {
  process.exit(EXIT_INTERRUPTED);
}

/** CA certificates from PEM files or CA folders made by `depotkit cert ca` (their certificates only). */
async function readCaCertificates(paths: string[]): Promise<string[]> {
  const { readCaPems } = await import('../pki/trust-source.js');
  return readCaPems(paths);
}

// ------------------------------------------------------------------ output

function rowLines<T>(row: FleetRow<T>, format: RowFormatter<T>): string[] {
  if (row.ok && row.result !== undefined) {
    const [first = '', ...rest] = format(row.result);
    return [`${row.name}  ok  ${first}`, ...rest.map((l) => `    ${l}`)];
  }
  if (row.result !== undefined) {
    const [first = '', ...rest] = format(row.result);
    return [`${row.name}  FAILED  ${first}`, ...rest.map((l) => `    ${l}`)];
  }
  const lines = [`${row.name}  FAILED  ${row.error?.message ?? 'unknown error'}`];
  const remedy = row.error?.remediation ?? row.error?.hint;
  if (remedy) lines.push(`    ${remedy}`);
  return lines;
}

function trustLine(outcomes: TrustOutcome[]): string[] {
  return outcomes.map((o) => `${o.action === 'imported' ? 'imported' : 'already trusted'}: ${o.subject}${o.alias ? ` (alias ${o.alias})` : ''}`);
}

function depotLine(result: DepotPushResult & { trusted?: TrustOutcome[]; sync?: SyncResult & { action?: string } }): string[] {
  const conf = result.settings.depotConfiguration;
  const where = conf?.url ?? `${conf?.hostname ?? '?'}:${conf?.port ?? '?'}`;
  const lines = [`depot ${where}: ${result.status ?? 'no status'}${result.action === 'unchanged' ? ' (already set, nothing sent)' : ''}`];
  if (!result.ok && result.message) lines.push(result.errorCode ? `${result.errorCode}: ${result.message}` : result.message);
  if (!result.ok && result.remediation) lines.push(result.remediation);
  if (!result.ok && result.hint) lines.push(result.hint);
  if (result.trusted) lines.push(...trustLine(result.trusted));
  if (result.sync) lines.push(...syncLines(result.sync));
  return lines;
}

function syncLines(sync: SyncResult & { action?: string }): string[] {
  const when = sync.completedAt ? ` (${sync.completedAt})` : '';
  if (sync.ok) return [`sync: ${sync.status}${when}${sync.action === 'already-synced' ? ', already synced: nothing sent' : ''}`];
  return [`sync: ${sync.status}${when}: ${sync.message ?? 'no message'}`, ...(sync.fix ? [sync.fix] : [])];
}

function downloadLines(report: DownloadReport): string[] {
  const done = report.bundles.filter((b) => b.status === BUNDLE_DOWNLOAD_STATUS.success).length;
  const bytes = report.bundles.reduce((sum, b) => sum + b.size, 0);
  const lines = [`release ${report.release} (${report.imageType}): ${done} of ${plural(report.bundles.length, 'bundle')} downloaded, ${formatBytes(bytes)}`];
  for (const b of report.bundles) {
    const how = b.action === 'already-downloaded' ? ' (already downloaded)' : '';
    lines.push(`${b.status.padEnd(8)} ${b.component} ${b.name}${how}${b.status === BUNDLE_DOWNLOAD_STATUS.success ? '' : b.message ? `: ${b.message}` : ''}`);
  }
  return lines;
}

function statusLines(s: InstallerStatus): string[] {
  const conf = s.depot.depotConfiguration;
  const account = s.depot.offlineAccount;
  const lines = [`${s.appliance.role} ${s.appliance.version}`];
  lines.push(
    conf
      ? `depot: ${conf.url ?? `${conf.hostname}:${conf.port}`}${account?.username ? ` as ${account.username}` : ''}: ${account?.status ?? 'no status'}${account?.message ? ` (${account.message})` : ''}`
      : `depot: not configured${account?.status ? ` (${account.status})` : ''}`,
  );
  if (s.sync)
    lines.push(
      `sync: ${s.sync.syncStatus}${s.sync.lastSyncCompletionTimestamp ? ` (${s.sync.lastSyncCompletionTimestamp})` : ''}${s.sync.errorMessage ? `: ${s.sync.errorMessage}` : ''}`,
    );
  if (s.downloads) {
    const counts = Object.entries(s.downloads.byStatus).map(([status, n]) => `${n} ${status}`);
    lines.push(`bundles: ${counts.length > 0 ? counts.join(', ') : 'none offered'}`);
    for (const f of s.downloads.failed) lines.push(`  FAILED ${f.component ?? f.bundleId}${f.message ? `: ${f.message}` : ''}`);
  }
  lines.push(`trusted certificates: ${s.trusted.length}`);
  for (const t of s.trusted) lines.push(`  ${t.alias}${t.subject ? `: ${t.subject}, valid to ${t.notAfter}` : ''}`);
  return lines;
}
