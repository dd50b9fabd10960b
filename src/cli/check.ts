import type { Command } from 'commander';
import { CHECK_ANONYMOUS_PATHS } from '../constants.js';
import type { CheckResult } from '../check/check.js';
import { CHECK_DEFAULTS } from '../check/defaults.js';
import { EXIT, usageError } from '../util/errors.js';
import { countBySeverity, formatFinding } from '../util/findings.js';
import { formatBytes, withByteProgress } from '../util/progress.js';
import { plural } from '../util/text.js';
import { concurrencyOption, depotUserPassword, jsonOption, passwordEnvOption, passwordFileOption, timeoutOption, trustOption } from './options.js';
import { collect, printJson, printLines } from './output.js';
import { formatReleases, selectionLine } from './release-lines.js';
import { addSelectionOptions, selectOptionsOf } from './transfer-shared.js';

interface CheckCliOptions {
  ca: string[];
  user?: string;
  passwordFile?: string;
  passwordEnv?: string;
  asHost?: string;
  allowHttpCredentials?: boolean;
  openPath: string[];
  deep?: boolean;
  concurrency: number;
  timeout: number;
  json?: boolean;
  release: string[];
  component: string[];
  imageType?: string;
}

export function registerCheckCommand(program: Command): void {
  const command = program
    .command('check <depot-url>')
    .description('check a depot as the installer does: TLS, host name, auth, catalog, binaries')
    .addOption(trustOption('--ca', "a CA the installer trusts; trust comes only from these, as in the installer's store"))
    .option('--user <name>', "the depot user (the installer's offlineAccount)")
    .addOption(passwordFileOption("the depot user's"))
    .addOption(passwordEnvOption("the depot user's"))
    .option('--as-host <name>', "the host name the installer will use, when it differs from the URL's")
    .option(
      '--allow-http-credentials',
      'send the password over plain HTTP (http:// URLs); without it the check withholds it there, as it does from a server that fails the TLS checks',
    )
    .option(
      '--open-path <path>',
      `with --user: a path that must answer without credentials, asked for without them besides ${CHECK_ANONYMOUS_PATHS.hcl} and ${CHECK_ANONYMOUS_PATHS.patchStore} (repeatable; a trailing / for a folder)`,
      collect,
      [],
    )
    .option('--deep', 'download every binary and compare its SHA-256 with the catalog')
    .addOption(concurrencyOption(CHECK_DEFAULTS.concurrency, 'requests in flight at once'))
    .addOption(timeoutOption(CHECK_DEFAULTS.timeoutMs, 'connect and handshake timeout'))
    .addOption(jsonOption('print the findings as JSON'));
  // A depot cut to a selection (its status page prints these): a binary left out is said, not an error.
  addSelectionOptions(command, 'expect').action(async (url: string, opts: CheckCliOptions) => {
    if (opts.openPath.length > 0 && opts.user === undefined)
      throw usageError('--open-path needs --user: without credentials every request of the check is already anonymous.');
    const { normaliseOpenPrefix } = await import('../server/paths.js');
    const openPaths = opts.openPath.map((p) => normaliseOpenPrefix(p, '--open-path') + (p.endsWith('/') ? '/' : ''));
    const password = await depotUserPassword(opts.user, opts);
    // Imported here so that the CLI starts fast for every other command.
    const [{ checkDepot }, { readCaPems }] = await Promise.all([import('../check/check.js'), import('../cert/trust-source.js')]);
    const caPems = await readCaPems(opts.ca);
    const result = await withByteProgress('downloading', !opts.json, (hooks) =>
      checkDepot(url, {
        caPems,
        user: opts.user,
        password,
        asHost: opts.asHost,
        allowHttpCredentials: opts.allowHttpCredentials,
        openPaths,
        deep: opts.deep,
        concurrency: opts.concurrency,
        timeoutMs: opts.timeout * 1000,
        selection: selectOptionsOf(opts),
        ...hooks,
      }),
    );
    if (opts.json) printJson(result);
    else printLines(formatCheckResult(result));
    process.exitCode = result.accepted ? EXIT.ok : EXIT.problems;
  });
}

export function formatCheckResult(result: CheckResult): string[] {
  const lines: string[] = [`Depot ${result.base}`];
  if (result.tls) {
    lines.push(`  TLS ${result.tls.protocol} ${result.tls.cipher}; certificate ${result.tls.subject}, issued by ${result.tls.issuer}`);
    lines.push(`  SAN DNS: ${result.tls.dnsNames.join(', ') || '(none)'}; IP: ${result.tls.ipAddresses.join(', ') || '(none)'}; SHA-256 ${result.tls.sha256}`);
  }
  if (result.stats.binaries) {
    lines.push(
      `  ${result.stats.checked}/${plural(result.stats.binaries, 'binary', 'binaries')} checked (${formatBytes(result.stats.bytes)} with the right size)${result.stats.hashed ? `, ${result.stats.hashed} downloaded and hashed` : ''}`,
    );
  }
  lines.push(...result.findings.flatMap(formatFinding));
  lines.push(...formatReleases(result.releases, result.grouping));
  if (result.selection !== undefined) lines.push(selectionLine(result.selection));
  const counts = countBySeverity(result.findings);
  lines.push(
    result.accepted
      ? `ACCEPT: the installer would accept this depot (${plural(counts.warning, 'warning')}).`
      : `REJECT: the installer would not accept this depot (${plural(counts.error, 'error')}, ${plural(counts.warning, 'warning')}).`,
  );
  return lines;
}
